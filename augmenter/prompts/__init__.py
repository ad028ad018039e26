"""Prompt Engine: prompt files (instruction, few-shot, template) rendered into chat messages."""

from augmenter.prompts.engine import PromptEngine, PromptTemplate

__all__ = ["PromptEngine", "PromptTemplate"]
