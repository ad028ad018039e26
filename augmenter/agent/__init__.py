"""The agent: the loop that lets a Policy drive the Action Executor over the Working Memory."""

from augmenter.agent.executor import Executor, Select, parse_yes_no
from augmenter.agent.loop import EMPTY_REPLY, FAILED_REPLY, Agent, Session
from augmenter.agent.protocols import (
    Check,
    Checked,
    Composer,
    Consolidator,
    FunctionPolicy,
    Policy,
    ReplyComposer,
    Utility,
    as_check,
    as_policy,
    utility_result,
)

__all__ = [
    "Agent",
    "Check",
    "Checked",
    "Composer",
    "Consolidator",
    "EMPTY_REPLY",
    "Executor",
    "FAILED_REPLY",
    "FunctionPolicy",
    "Policy",
    "ReplyComposer",
    "Select",
    "Session",
    "Utility",
    "as_check",
    "as_policy",
    "parse_yes_no",
    "utility_result",
]
