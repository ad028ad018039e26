"""augmenter as a service: an OpenAI-compatible chat-completions endpoint (with the Working Memory summary in an
`augmenter` field), health and readiness, and a web chat page that shows the draft as it streams, then the
checked answer with its sources and the turn's trace.

    augmenter serve [overrides]          # the same Hydra overrides as `augmenter chat`, plus serve.*

In Python: `create_app(pool_from_config(cfg).build(), ServeSettings.from_config(cfg.serve))` is an ASGI app;
`with Background(app) as url:` serves it on a free port in a thread.
"""

from __future__ import annotations

from augmenter.serve.app import create_app
from augmenter.serve.pool import AgentPool, pool_from_config, warm_up
from augmenter.serve.runner import Background, run
from augmenter.serve.settings import ServeSettings

__all__ = ["AgentPool", "Background", "ServeSettings", "create_app", "pool_from_config", "run", "warm_up"]
