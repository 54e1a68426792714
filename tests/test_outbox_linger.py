"""A kicked drain that emptied the outbox waits a moment for the next kicked message (jobs.outbox.LINGER_SECONDS),
so an agent's next message is learnt by the same RQ job on its warm connections; the cron drain does not wait."""
from __future__ import annotations

import pytest
from sqlalchemy import func, select

from jobs.outbox import LINGER_POLL_SECONDS, drain_outbox, enqueue_drain
from memory_core.domain.models import Memory, Outbox
from memory_core.learning.ingest import ingest_message


class FakeClock:
    """The job's monotonic clock and sleep: each sleep moves the clock and may let an agent write."""

    def __init__(self, on_sleep=None):
        self.now, self.sleeps, self.on_sleep = 0.0, 0, on_sleep

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps += 1
        self.now += seconds
        if self.on_sleep is not None:
            self.on_sleep(self.sleeps)


def test_a_message_that_arrives_while_the_drain_lingers_is_learnt_by_the_same_job(
        factory, system_session, backend, servers):
    org = factory.org()
    ana = factory.member(org, role="owner")
    factory.contact(org, "Talleres García S.L.")

    def say(n: int) -> None:
        ingest_message(system_session, channel="web", conversation="c1", external_id=f"m{n}", org_id=org.id,
                       user_id=ana.id, phone=None, role="user", text=f"Talleres García paga a {30 * n} días")
        system_session.commit()
        enqueue_drain()  # what an agent's ingest does after its commit

    say(1)
    clock = FakeClock(on_sleep=lambda n: say(2) if n == 3 else None)  # the agent's next turn, 150 ms later
    assert drain_outbox(sleep=clock.sleep, monotonic=clock.monotonic) == {"done": 2, "failed": 0}

    system_session.expire_all()
    assert all(r.processed_at is not None for r in system_session.scalars(select(Outbox)))
    assert system_session.scalars(select(Memory.value).where(Memory.status == "active")).all() == ["60 días"]
    # It then waited out its linger from the last message it found, and ended.
    assert clock.now == pytest.approx(3 * LINGER_POLL_SECONDS + 1.0, abs=LINGER_POLL_SECONDS)


def test_a_lingering_drain_reads_the_outbox_only_when_a_message_was_kicked(factory, system_session, backend,
                                                                          servers, monkeypatch):
    import jobs.outbox as outbox

    claims = []
    real = outbox.drain_batch
    monkeypatch.setattr(outbox, "drain_batch", lambda *a, **kw: claims.append(1) or real(*a, **kw))
    clock = FakeClock()
    assert drain_outbox(sleep=clock.sleep, monotonic=clock.monotonic) == {"done": 0, "failed": 0}
    assert clock.sleeps == 20 and len(claims) == 1  # a second of watching Redis, one claim


def test_a_drain_told_not_to_linger_ends_as_soon_as_the_outbox_is_empty(servers):
    clock = FakeClock()
    assert drain_outbox(linger=0, sleep=clock.sleep, monotonic=clock.monotonic) == {"done": 0, "failed": 0}
    assert clock.sleeps == 0  # as the cron drain (drain_outbox_periodic) runs it


def test_a_drain_job_hands_over_to_a_fresh_job_once_it_has_claimed_for_its_time(
        factory, system_session, backend, servers, redis_conn, monkeypatch):
    import jobs.outbox as outbox
    from memory_core.adapters.queue import get_queue

    org = factory.org()
    ana = factory.member(org, role="owner")
    for n in range(3):
        ingest_message(system_session, channel="web", conversation=f"budget-{n}", external_id=f"budget-{n}",
                       org_id=org.id, user_id=ana.id, phone=None, role="user", text="gracias")
    system_session.commit()
    monkeypatch.setattr(outbox, "CLAIM_SIZE", 1)  # a claim of one message, so a job takes several claims
    clock = FakeClock()
    real = outbox.drain_batch

    def slow_batch(*args, **kwargs):  # each claim takes 60% of the job's time
        result = real(*args, **kwargs)
        clock.now += 0.6 * outbox.DRAIN_WITHIN_SECONDS
        return result

    monkeypatch.setattr(outbox, "drain_batch", slow_batch)
    queued = get_queue(servers).count
    # Two claims, then the job ends and queues a fresh one for what is left, though far below its message bound.
    assert drain_outbox(sleep=clock.sleep, monotonic=clock.monotonic) == {"done": 2, "failed": 0}
    assert outbox.BATCH_SIZE > 2
    assert get_queue(servers).count == queued + 1
    assert system_session.scalar(select(func.count()).select_from(Outbox).where(Outbox.processed_at.is_(None))) == 1
