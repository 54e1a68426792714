"""A person's preferences that are not about memory: the language of their console."""
from __future__ import annotations

import uuid

from sqlalchemy import update
from sqlalchemy.orm import Session

from memory_core.domain import audit
from memory_core.domain.errors import InvalidInput
from memory_core.domain.models import User

CONSOLE_LANGUAGES = ("es", "en")


def set_console_language(s: Session, user_id: uuid.UUID, language: str, *, actor_label: str) -> None:
    """Save the language the person reads the console in (the caller commits)."""
    if language not in CONSOLE_LANGUAGES:
        raise InvalidInput("The console speaks Spanish (es) or English (en).", "language")
    s.execute(update(User).where(User.id == user_id).values(ui_locale=language))
    audit.record(s, actor_label=actor_label, actor_user_id=user_id, action="user.console_language",
                 target_type="user", target_id=user_id, details={"language": language})
