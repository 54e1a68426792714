"""What a password must be: long enough, not a common one, not the email. One home for the rule."""
from __future__ import annotations

from functools import lru_cache
from importlib import resources

from memory_core.domain.errors import InvalidInput

MIN_LENGTH = 12
MAX_LENGTH = 200


@lru_cache(maxsize=1)
def common_passwords() -> frozenset[str]:
    """The shipped list of common passwords (lower case), read once."""
    text = resources.files("memory_core.tenancy").joinpath("data/common_passwords.txt").read_text("utf-8")
    return frozenset(line.strip() for line in text.splitlines() if line.strip() and not line.startswith("#"))


def check_password(password: str, *, email: str | None = None) -> str:
    """The password if acceptable; InvalidInput (field "password") saying why not."""
    password = password or ""
    if len(password) < MIN_LENGTH:
        raise InvalidInput("Use at least %(num)s characters.", field="password", num=MIN_LENGTH)
    if len(password) > MAX_LENGTH:
        raise InvalidInput("Use at most %(num)s characters.", field="password", num=MAX_LENGTH)
    folded = password.lower()
    if folded in common_passwords() or len(set(folded)) <= 2:
        raise InvalidInput("That password is too common; choose another.", field="password")
    if email and folded in (email.lower(), email.lower().split("@")[0]):
        raise InvalidInput("The password must not be your email.", field="password")
    return password
