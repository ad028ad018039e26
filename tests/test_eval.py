"""Evaluation: metrics against known values, the Fig. 5 ablation switches, and `augmenter eval` / `report`
end to end with the fake LLM (resume included)."""

import json

import pytest

from augmenter.cli.main import main
from augmenter.config import build_agent, build_evaluator, compose, group_options
from augmenter.errors import ConfigError
from augmenter.eval import metrics
from augmenter.eval.report import bootstrap_ci, load_runs, paired_delta
from augmenter.eval.runner import Evaluator, read_records, summarize
from augmenter.memory import Snippet
from conftest import DATA
from policies import LLMAugmenterPolicy


# ---- metrics -------------------------------------------------------------------------------------------
def test_kf1_hand_computed():
    # "the hotel has free wifi" -> hotel has free wifi; knowledge -> free wifi is available: 2 common of 4 and 4
    assert metrics.kf1("The hotel has free WiFi!", ["Free wifi is available."]) == pytest.approx(50.0)
    # snippets are joined: 4 of 4 predicted, 4 of 6 gold -> P 1, R 2/3, F1 0.8
    assert metrics.kf1("free wifi free parking", ["Free wifi.", "Free parking, is available"]) == pytest.approx(80.0)
    assert metrics.kf1("anything", []) == 0.0


def test_rouge_and_length_known_values():
    r = metrics.rouge("the cat sat", ["the cat ran"])  # 2 of 3 unigrams, LCS 2
    assert r["ROUGE-1"] == pytest.approx(200 / 3) and r["ROUGE-L"] == pytest.approx(200 / 3)
    assert metrics.rouge("the cat sat", ["a dog", "the cat sat"])["ROUGE-1"] == pytest.approx(100.0)  # best ref
    assert metrics.length("  three  little words ") == 3


def test_bleu_and_chrf_corpus_level_multi_reference():
    assert metrics.bleu4(["the cat sat on the mat"], [["the cat sat on the mat"]]) == pytest.approx(100.0)
    assert metrics.bleu4(["a b c d e"], [["v w x y z"]]) == pytest.approx(0.0)
    # the second turn has two references; the matching one counts, the missing one is padding
    assert metrics.bleu4(
        ["the cat sat on the mat", "a dog ran in the park today"],
        [["the cat sat on the mat"], ["nothing alike here", "a dog ran in the park today"]],
    ) == pytest.approx(100.0)
    assert metrics.chrf(["same text"], [["same text"]]) == pytest.approx(100.0)


def test_meteor_uses_wordnet_offline():
    # NLTK's own example: an exact 4-word match scores 1 - 0.5 * (1/4)**3
    assert metrics.meteor("this is a test", ["this is a test"]) == pytest.approx(99.21875)
    # "sick" ~ "ill" only through WordNet synonyms: then all 3 words match in one chunk
    assert metrics.meteor("he was sick", ["he was ill"]) == pytest.approx(100 * (1 - 0.5 / 27))
    assert metrics.meteor("he was sick", ["he was tall"]) < 70


def test_bertscore_with_packaged_minilm():
    same = metrics.bertscore(["The rooms have free wifi."], [["The rooms have free wifi."]])
    other = metrics.bertscore(["The rooms have free wifi."], [["Parking costs ten pounds a day."]])
    assert same == pytest.approx(100.0, abs=0.01) and other < same - 5


def test_corpus_metrics_mark_unavailable_ones():
    out = metrics.corpus_metrics(["free wifi"], [["They have free wifi."]], [["Free wifi."]], with_bertscore=False)
    assert out["BARTScore"] is None and out["BLEURT"] is None and out["KF1"] == pytest.approx(100.0)


# ---- the Fig. 5 switches ---------------------------------------------------------------------------------
def test_ungated_utility_always_asks_for_a_revision_and_latest_is_sent(make_agent):
    from augmenter.llm import FakeLLM
    from augmenter.utilities import KF1Utility

    good = "The Grand Meridian Hotel has an indoor pool open daily."
    fake = FakeLLM(responses=[good, "No idea."])
    agent = make_agent(fake, LLMAugmenterPolicy(), utility=KF1Utility(threshold=0.0, gate=False), max_llm_calls=2)
    agent.executor.select = "latest"
    mem = agent.respond("Does the Grand Meridian Hotel have a pool?")
    assert len(mem.o) == 2 and mem.f[0] is not None  # feedback although the first candidate passed
    assert "Feedback on it" in fake.calls[1][-1]["content"]
    assert mem.response == "No idea."  # not the better one: no utility gating


def test_rerank_samples_the_same_prompt_and_sends_the_best(make_agent):
    from augmenter.llm import FakeLLM
    from augmenter.utilities import KF1Utility

    fake = FakeLLM(responses=["No idea.", "The Grand Meridian Hotel has an indoor pool open daily."])
    agent = make_agent(fake, LLMAugmenterPolicy(), utility=KF1Utility(gate=False), max_llm_calls=2)
    agent.executor.feedback_in_prompt = False
    mem = agent.respond("Does the Grand Meridian Hotel have a pool?")
    assert fake.calls[0] == fake.calls[1]  # no feedback in the second prompt
    assert mem.response == mem.o[1] and mem.u[1] > mem.u[0]


def test_given_knowledge_replaces_retrieval(make_agent):
    from augmenter.llm import FakeLLM

    gold = [Snippet(id="g1", text="The pool closes at 9 pm.")]
    agent = make_agent(FakeLLM(default="It closes at 9 pm."), LLMAugmenterPolicy())
    mem = agent.respond("Does the Grand Meridian Hotel have a pool?", given=gold)
    assert [s.id for s in mem.e] == ["g1"]
    assert agent.respond("Does the Grand Meridian Hotel have a pool?", given=[]).e == []


def test_bootstrap_interval_and_paired_delta():
    lo, hi = bootstrap_ci([10.0, 20.0] * 50)
    assert 13.0 < lo < 15.0 and 15.0 < hi < 17.0  # mean 15, sd 5, n 100: about 15 +- 1
    assert bootstrap_ci([7.0] * 10) == [7.0, 7.0]
    base = {"score_per_turn": {"a": 10.0, "b": 20.0, "c": 30.0}}
    run = {"score_per_turn": {"a": 12.0, "b": 22.0, "d": 99.0}}  # only a and b are shared
    delta, ci = paired_delta(run, base)
    assert delta == 2.0 and ci == [2.0, 2.0]
    assert paired_delta({"score_per_turn": {"x": 1.0}}, base) is None


# ---- augmenter eval / grid / report, fake LLM ----------------------------------------------------------------
def _eval_args(tmp_path, *extra):
    return [
        f"data_root={DATA}",
        "llm=fake",
        f"llm_cache.dir={tmp_path / 'cache'}",
        f"eval.out_dir={tmp_path}",
        "eval.progress=false",
        *extra,
    ]


def _evaluator(cfg) -> Evaluator:
    """An evaluator of `cfg`, its agent and task built from the same config (as the CLI builds them)."""
    return build_evaluator(cfg)


@pytest.mark.parametrize("name", group_options("experiment"))
def test_every_experiment_composes_and_builds(name, tmp_path):
    extra = ["retriever=bm25s"] if name.startswith("table5") else []  # not the dense encoder over all of OTT-QA
    cfg = compose("eval", _eval_args(tmp_path, f"experiment={name}", *extra))
    assert cfg.name == name and cfg.eval.dataset in ("dstc11", "dstc7", "ottqa")
    mem = build_agent(cfg).respond("Is there free parking?")
    assert bool(mem.e) == (not cfg.policy._target_.endswith("NoKnowledgePolicy"))
    base = cfg.utility.get("base") or {}  # a combined utility's base (the grounded system's: claims)
    if "ClaimsUtility" in (cfg.utility._target_[-13:], str(base.get("_target_", ""))[-13:]):
        # the fake's reply states nothing the evidence supports: never sent; the answer is the knowledge's own words
        # (the FAQ or reviews on the question) or a plain "does not answer"
        assert mem.response != cfg.llm.default
        if mem.outcome == "quoted":
            assert (
                any(s.text.split("A:")[-1].strip() in mem.response for s in mem.e if s.doc_type == "faq")
                or '"' in mem.response
            )
        else:
            assert mem.outcome == "abstained"
            assert mem.response.startswith("I'm sorry, but the knowledge I have does not")
    else:  # scored, and sent as the best (the only) candidate there is
        assert mem.outcome == "answered" and mem.response == cfg.llm.default


def test_eval_writes_records_and_resumes(tmp_path):
    cfg = compose("eval", _eval_args(tmp_path, "eval.limit=3"))
    summary = _evaluator(cfg).run()
    path = tmp_path / "dstc11-dev-n3-seed0" / "table2_bm25_feedback" / "records.jsonl"
    lines = path.read_text().splitlines()
    assert summary["turns"] == 3 and len(lines) == 3
    record = json.loads(lines[0])
    assert {"dialogue_id", "memory", "metrics", "cost", "references", "gold_knowledge"} <= set(record)
    assert record["memory"]["e"] and record["gold_knowledge"] and record["cost"]["knowledge_calls"] == 1
    assert 0 <= record["metrics"]["KF1"] <= 100
    # a crash mid-write: the cut line is dropped and only that turn is recomputed
    path.write_text("\n".join(lines[:2]) + "\n" + lines[2][:40])
    _evaluator(cfg).run()
    again = path.read_text().splitlines()
    assert again[:2] == lines[:2] and len(read_records(path)) == 3


def test_turn_time_is_turn_seconds_and_older_records_are_read(tmp_path):
    """`cost.turn_seconds` is a turn's measured time; records written before it kept that time as `wall_seconds`,
    which in the Working Memory's figures is the sum of its actions' times: they are read as `turn_seconds`."""
    _evaluator(compose("eval", _eval_args(tmp_path, "eval.limit=2"))).run()
    path = tmp_path / "dstc11-dev-n2-seed0" / "table2_bm25_feedback" / "records.jsonl"
    new = [json.loads(line) for line in path.read_text().splitlines()]
    assert all(r["cost"]["turn_seconds"] > 0 and r["cost"]["wall_seconds"] > 0 for r in new)
    old = {**new[0], "cost": {k: v for k, v in new[0]["cost"].items() if k != "turn_seconds"}}
    old["cost"]["wall_seconds"] = 1.5
    path.write_text(json.dumps(old) + "\n" + json.dumps(new[1]) + "\n")
    records = read_records(path)
    assert records[0]["cost"]["turn_seconds"] == 1.5 and "wall_seconds" not in records[0]["cost"]
    assert records[1] == new[1]
    cost = summarize(records, with_bertscore=False)["cost"]
    assert cost["turn_seconds"] == pytest.approx((1.5 + new[1]["cost"]["turn_seconds"]) / 2)
    assert "wall_seconds" not in cost  # not a figure of every record
    assert load_runs(path.parents[1], with_bertscore=False)["table2_bm25_feedback"]["cost"] == cost


def test_eval_refuses_to_mix_configurations(tmp_path):
    _evaluator(compose("eval", _eval_args(tmp_path, "eval.limit=1"))).run()
    with pytest.raises(ConfigError, match="different configuration"):
        _evaluator(compose("eval", _eval_args(tmp_path, "eval.limit=1", "utility.threshold=0.5"))).run()
    # the same options with an edited prompt file are a different system too
    import shutil
    from importlib import resources

    mine = tmp_path / "mine.yaml"
    shutil.copy(resources.files("augmenter.prompts") / "files" / "customer_service.yaml", mine)
    args = _eval_args(tmp_path, "eval.limit=1", f"prompt.response={mine}", "name=mine")
    _evaluator(compose("eval", args)).run()
    mine.write_text(mine.read_text().replace("one to three sentences", "one sentence"))
    with pytest.raises(ConfigError, match="prompt_files"):
        _evaluator(compose("eval", args)).run()


def test_runs_recorded_before_an_option_existed_still_resume(tmp_path):
    cfg = compose("eval", _eval_args(tmp_path, "eval.limit=1"))
    run = _evaluator(cfg)
    run.run()
    stored = json.loads((run.dir / "config.json").read_text())
    assert "review_window" not in stored["consolidator"]  # left out while off: as a run recorded before it existed
    _evaluator(cfg).run()  # resumes
    with pytest.raises(ConfigError, match="consolidator"):  # switched on, it is a different system
        _evaluator(compose("eval", _eval_args(tmp_path, "eval.limit=1", "consolidator.review_window=1"))).run()


def test_a_second_writer_is_refused(tmp_path):
    import subprocess
    import sys

    cfg = compose("eval", _eval_args(tmp_path, "eval.limit=1"))
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        run = _evaluator(cfg)
        run.dir.mkdir(parents=True)
        (run.dir / "run.lock").write_text(str(other.pid))
        with pytest.raises(ConfigError, match=f"another eval \\(pid {other.pid}\\)"):
            run.run()
    finally:
        other.kill()
        other.wait()
    assert _evaluator(cfg).run()["turns"] == 1  # the lock of a dead process is stale


def test_gold_and_no_knowledge_access(tmp_path):
    for name, expect in (("table2_gold", True), ("table2_llm_only", False)):
        _evaluator(compose("eval", _eval_args(tmp_path, "eval.limit=2", f"experiment={name}"))).run()
        records = read_records(tmp_path / "dstc11-dev-n2-seed0" / name / "records.jsonl")
        for r in records:
            evidence = [s["text"] for s in r["memory"]["e"]]
            assert (evidence == r["gold_knowledge"]) if expect else not evidence


def test_bad_knowledge_access_is_a_clear_error(tmp_path):
    with pytest.raises(ConfigError, match="eval.knowledge"):
        _evaluator(compose("eval", _eval_args(tmp_path, "eval.knowledge=psychic")))


def test_dstc7_news_chat_turns():
    from augmenter.tasks.dstc7 import load_turns

    items = load_turns(DATA / "dstc7-track2")
    assert len(items) == 158  # of the 162 with context and fact, 4 have no reference response
    assert all(len(i.gold) == 1 and i.gold[0].text and i.q and i.references for i in items)
    assert sum(len(i.references) > 1 for i in items) > 100  # multi-reference


def test_grid_and_report_end_to_end(tmp_path, capsys):
    args = _eval_args(tmp_path, "eval.limit=2")
    assert main(["grid", "--only", "table2_bm25,fig5", *args]) == 0
    sample = tmp_path / "dstc11-dev-n2-seed0"
    assert {p.name for p in sample.iterdir()} == {
        "table2_bm25",
        "table2_bm25_feedback",
        "fig5_always_feedback",
        "fig5_no_gating",
        "fig5_rerank",
    }
    assert main(["report", str(sample), "--out", str(tmp_path / "rep"), "--no-bertscore"]) == 0
    text = (tmp_path / "rep" / "report.md").read_text()
    assert "## Fig. 5" in text and "(5) rerank the best of two" in text and "| n/a |" in text
    assert "ΔKF1 vs first row" in text
    summaries = json.loads((tmp_path / "rep" / "summaries.json").read_text())
    assert all(s["score_metric"] == "KF1" and "score_per_turn" not in s for s in summaries.values())
    assert (tmp_path / "rep" / "fig5.png").stat().st_size > 1000
    assert main(["report", str(tmp_path / "nothing-here")]) == 2


def test_eval_exclude_draws_a_sample_disjoint_from_another(tmp_path, dstc11_kb):
    """eval.exclude={limit, seed}: the turns come from outside that sample (the labelled claim set's turns are apart
    from the 200 the experiments are scored on), the same ones every time, in a directory of their own."""
    from omegaconf import OmegaConf

    from augmenter.eval.runner import run_dir, sample_turns
    from augmenter.eval.tasks import build_task

    task = build_task("dstc11", DATA, knowledge=dstc11_kb)
    ev = OmegaConf.create({"limit": 60, "seed": 1, "exclude": {"limit": 200, "seed": 0}})
    held = {t.id for t in task.turns(200, 0)}
    drawn = [t.id for t in sample_turns(task, ev)]
    assert len(drawn) == 60 == len(set(drawn)) and not set(drawn) & held
    assert drawn == [t.id for t in sample_turns(task, ev)]
    plain = [t.id for t in sample_turns(task, OmegaConf.create({"limit": 60, "seed": 1, "exclude": None}))]
    assert plain != drawn and set(plain) & held  # without exclude the same seed overlaps the 200
    cfg = compose("eval", _eval_args(tmp_path, "eval.limit=60", "eval.seed=1", "eval.exclude={limit:200,seed:0}"))
    assert run_dir(cfg).parent.name == "dstc11-dev-n60-seed1-minus-n200-seed0"


def test_eval_exclude_draws_each_nested_sample_once(dstc11_kb, monkeypatch):
    """Each sample drawn apart from all before it (the labelled rounds' excludes): a sample's exclude repeats the
    samples before it with their own, and each is drawn once, not once per mention (2^n draws)."""
    from omegaconf import OmegaConf

    from augmenter.eval.runner import sample_turns
    from augmenter.eval.tasks import build_task

    task = build_task("dstc11", DATA, knowledge=dstc11_kb)
    draws = []
    turns = task.turns
    monkeypatch.setattr(task, "turns", lambda limit, seed: draws.append((limit, seed)) or turns(limit, seed))
    samples = [{"limit": 20, "seed": 0}]
    for seed in range(1, 11):
        samples.append({"limit": 5, "seed": seed, "exclude": list(samples)})
    drawn = sample_turns(task, OmegaConf.create({"limit": 5, "seed": 11, "exclude": samples}))
    assert len(draws) <= len(samples) + 1  # at most one per sample, and every turn loaded once
    earlier = {t.id for s in samples for t in sample_turns(task, OmegaConf.create(s))}
    assert len(drawn) == 5 and not {t.id for t in drawn} & earlier and len(earlier) == 20 + 5 * 10


def test_a_chain_of_samples_draws_what_the_nested_excludes_draw(tmp_path, dstc11_kb):
    """{chain: [sample, ...]}: each sample drawn apart from those before it, the same turns as the nested form (whose
    text doubles with each sample: 22 labelled rounds outgrew 13 GiB), from a command line too."""
    from omegaconf import OmegaConf

    from augmenter.eval.runner import run_dir, sample_turns
    from augmenter.eval.tasks import build_task

    task = build_task("dstc11", DATA, knowledge=dstc11_kb)
    samples = [{"limit": 20, "seed": 0}]
    for seed in range(1, 6):
        samples.append({"limit": 5, "seed": seed, "exclude": list(samples)})
    nested = [t.id for t in sample_turns(task, OmegaConf.create({"limit": 5, "seed": 9, "exclude": samples}))]
    links = [{"limit": 20, "seed": 0}] + [{"limit": 5, "seed": seed} for seed in range(1, 6)]
    chain = [t.id for t in sample_turns(task, OmegaConf.create({"limit": 5, "seed": 9, "exclude": {"chain": links}}))]
    assert chain == nested and len(chain) == 5
    chained = "{chain:[{limit:20,seed:0}," + ",".join(f"{{limit:5,seed:{s}}}" for s in range(1, 6)) + "]}"
    cfg = compose("eval", _eval_args(tmp_path, "eval.limit=5", "eval.seed=9", f"eval.exclude={chained}"))
    assert [t.id for t in sample_turns(task, cfg.eval)] == nested
    assert run_dir(cfg).parent.name.startswith("dstc11-dev-n5-seed9-minus-chain(-n20-seed0-n5-seed1")
    nested_link = {"chain": [{"limit": 20, "seed": 0}, {"limit": 5, "seed": 1, "exclude": {"limit": 20, "seed": 0}}]}
    with pytest.raises(ConfigError, match="chain's samples are"):
        sample_turns(task, OmegaConf.create({"limit": 5, "seed": 9, "exclude": nested_link}))


def test_eval_exclude_takes_a_list_of_samples_each_with_its_own_exclude(tmp_path, dstc11_kb):
    """A development sample apart from both the 200 scored turns and the claim set's 60 (drawn apart from the 200)."""
    from omegaconf import OmegaConf

    from augmenter.eval.runner import run_dir, sample_turns
    from augmenter.eval.tasks import build_task

    task = build_task("dstc11", DATA, knowledge=dstc11_kb)
    claim_set = {"limit": 60, "seed": 1, "exclude": {"limit": 200, "seed": 0}}
    held = {t.id for t in task.turns(200, 0)} | {t.id for t in sample_turns(task, OmegaConf.create(claim_set))}
    assert len(held) == 260
    ev = OmegaConf.create({"limit": 40, "seed": 2, "exclude": [{"limit": 200, "seed": 0}, claim_set]})
    drawn = [t.id for t in sample_turns(task, ev)]
    assert len(set(drawn)) == 40 and not set(drawn) & held
    cfg = compose(
        "eval",
        _eval_args(
            tmp_path,
            "eval.limit=40",
            "eval.seed=2",
            "eval.exclude=[{limit:200,seed:0},{limit:60,seed:1,exclude:{limit:200,seed:0}}]",
        ),
    )
    assert run_dir(cfg).parent.name == "dstc11-dev-n40-seed2-minus-n200-seed0-minus-n60-seed1(minus-n200-seed0)"
    with pytest.raises(ConfigError, match="eval.exclude"):
        compose("eval", _eval_args(tmp_path, "eval.exclude=[{limit:0,seed:1}]"))


def test_a_deeply_nested_exclude_names_a_folder_the_filesystem_takes(tmp_path):
    """Four rounds apart from each other name a sample over 255 bytes: its folder keeps the start and a digest."""
    from augmenter.eval.runner import MAX_SAMPLE_NAME, run_dir

    e3 = "[{limit:200,seed:0},{limit:60,seed:1,exclude:{limit:200,seed:0}}]"
    e4 = f"[{{limit:200,seed:0}},{{limit:60,seed:1,exclude:{{limit:200,seed:0}}}},{{limit:60,seed:3,exclude:{e3}}}]"
    e5 = e4[:-1] + f",{{limit:60,seed:4,exclude:{e4}}}]"
    names = {
        run_dir(
            compose("eval", _eval_args(tmp_path, "eval.limit=60", f"eval.seed={seed}", f"eval.exclude={e5}"))
        ).parent.name
        for seed in (5, 6)
    }
    assert len(names) == 2  # two samples, two folders
    for name in names:
        assert len(name) <= MAX_SAMPLE_NAME and name.startswith("dstc11-dev-n60-seed")
        (tmp_path / name).mkdir()  # the filesystem takes it
