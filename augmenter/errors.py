"""Errors the user can act on. The CLI prints them as one line; nothing else should reach the user as a crash."""


class AugmenterError(Exception):
    """Base class: a problem with input, data or configuration, with a message that says what to do."""


class ConfigError(AugmenterError):
    """A configuration that cannot be composed or instantiated."""


class KnowledgeFormatError(AugmenterError):
    """A knowledge file that is missing or not in a supported format."""


class LLMError(AugmenterError):
    """The LLM backend could not answer (server down, model missing, prompt too long...)."""


class InputError(AugmenterError):
    """User input that cannot be used (e.g. a script file that is not UTF-8)."""
