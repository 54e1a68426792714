"""The usage ledger: every model call, with its purpose, model, tokens and cost."""
from __future__ import annotations

import uuid
from decimal import Decimal

from sqlalchemy.orm import Session

from memory_core.domain.model_port import Usage
from memory_core.domain.models import UsageLedger


def usage_row(usage: Usage, *, org_id: uuid.UUID | None = None, message_id: uuid.UUID | None = None,
              run_tag: str | None = None) -> dict:
    """One ledger row's values, for a caller that inserts many at once (the outbox worker, once per batch)."""
    return {"org_id": org_id, "message_id": message_id, "purpose": usage.purpose, "model": usage.model,
            "input_tokens": usage.input_tokens, "output_tokens": usage.output_tokens,
            "cost_usd": Decimal(str(usage.cost_usd)), "run_tag": run_tag}


def record_usage(session: Session, usage: Usage, *, org_id: uuid.UUID | None = None,
                 message_id: uuid.UUID | None = None, run_tag: str | None = None) -> None:
    session.add(UsageLedger(**usage_row(usage, org_id=org_id, message_id=message_id, run_tag=run_tag)))
