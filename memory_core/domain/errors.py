"""Domain exceptions, one line each; the edges (console, API, jobs) translate them."""


class MemoriaError(Exception):
    """Base of every domain error; its message is safe to show to the person who caused it. A message with
    values is a template ("Use at least %(num)s characters.") and the values, so an edge can translate the
    template and fill it in; str() is the English text, filled in."""

    def __init__(self, message: str = "", **values: object):
        super().__init__(message % values if values else message)
        self.template, self.values = message, values


class NotFound(MemoriaError):
    """The thing does not exist, or the caller may not know it exists."""


class Forbidden(MemoriaError):
    """The caller may not do this."""


class InvalidInput(MemoriaError):
    """The input is malformed; `field` names the offending field when there is one."""

    def __init__(self, message: str, field: str | None = None, **values: object):
        super().__init__(message, **values)
        self.field = field


class InvalidSentAt(InvalidInput):
    """A message's send time without a zone, or in the future."""

    def __init__(self, message: str):
        super().__init__(message, field="sent_at")


class Conflict(MemoriaError):
    """The state changed under the caller (already decided, already linked...)."""


class TooManyAttempts(MemoriaError):
    """Rate limited; try again later."""


class InvalidCredentials(MemoriaError):
    """Wrong email or password."""


class SubjectBusy(MemoriaError):
    """Another transaction is writing about a subject this one needs while it holds others (see subject_locks)."""
