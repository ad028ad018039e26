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


class LLMFatalError(LLMError):
    """An LLM failure that retrying cannot fix (401/403: a wrong or missing key, no access to the model).
    The agent does not turn it into a failed turn: chat and eval stop with a clear message and a non-zero exit."""


class CircuitOpenError(LLMError):
    """Too many LLM calls in a row have failed: the backend looks down, so no more calls are sent for now.
    A chat says so; an eval stops cleanly (its records kept, resumable)."""
