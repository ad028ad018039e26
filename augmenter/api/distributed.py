"""Ray grid runs built from config (`augmenter grid --ray`): the driver's jobs (`grid_jobs`) and the builder Ray
tasks build their evaluator with (`worker_evaluator`); the run itself is `augmenter.eval.distributed`.

    from augmenter.api.distributed import grid_jobs, worker_evaluator
    from augmenter.eval.distributed import connect, run_grid

    connect("auto")                          # or None: a local Ray instance
    outcomes = run_grid(grid_jobs(["table2_bm25"], ["llm=fake", "eval.limit=20"]), worker_evaluator, shard_size=5)
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import partial
from typing import Any

from omegaconf import OmegaConf

from augmenter.config import build_agent, build_task, compose
from augmenter.errors import InputError
from augmenter.eval.distributed import Job
from augmenter.eval.runner import Evaluator
from augmenter.eval.tasks import task_kind

__all__ = ["grid_jobs", "worker_evaluator"]


def grid_jobs(names: Sequence[str], overrides: Sequence[str] = ()) -> list[Job]:
    """One job per experiment (`configs/experiment/<name>`, with `overrides`), composed and checked now; their
    tasks (the sample, with DSTC11's knowledge base) are loaded once per data set and knowledge."""
    tasks: dict[str, Any] = {}
    jobs: list[Job] = []
    for name in names:
        cfg = compose("eval", [f"experiment={name}", *overrides])
        config = OmegaConf.to_container(cfg, resolve=True)
        assert isinstance(config, dict)  # a DictConfig's container is a dict
        ev = config["eval"]
        key = json.dumps(
            [ev["dataset"], ev["split"], config["data_root"], config["knowledge"]], sort_keys=True, default=str
        )
        task = tasks[key] = tasks.get(key) or build_task(cfg)
        jobs.append(Job(Evaluator(cfg, partial(build_agent, cfg), task), config))
    return jobs


def _given_turns(limit, seed):
    raise InputError("a Ray task answers the turns the driver gives it: it loads none")


def worker_evaluator(config: dict) -> Evaluator:
    """A Ray task's evaluator of a composed config (a plain dict): its agent built now; its task only scores the
    turns the driver sends (no knowledge base loaded for it)."""
    cfg = OmegaConf.create(config)
    dataset = str(cfg.eval.dataset)
    return Evaluator(cfg, build_agent(cfg), task_kind(dataset)(dataset, _given_turns))
