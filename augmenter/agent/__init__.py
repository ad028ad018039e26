"""The agent: the loop that lets a Policy drive the Action Executor over the Working Memory."""

from augmenter.agent.executor import Executor, parse_yes_no
from augmenter.agent.loop import EMPTY_REPLY, FAILED_REPLY, Agent, Policy, Session

__all__ = ["Agent", "EMPTY_REPLY", "Executor", "FAILED_REPLY", "Policy", "Session", "parse_yes_no"]
