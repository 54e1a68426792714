"""A short reply to the assistant's question is learnt as what it answers; a reply that answers nothing is not."""
from __future__ import annotations

import pytest
from sqlalchemy import select

from memory_core.backends.local_extractor.answers import completed_answer
from memory_core.domain.models import Memory
from memory_core.learning.ingest import ingest_message
from memory_core.learning.pipeline import process_message


@pytest.mark.parametrize("question, reply, statement", [
    ("¿A qué hora abrís?", "a las diez", "abrimos a las diez"),
    ("What time do you open?", "at ten", "we open at ten"),  # asked of the business
    ("¿Cómo tomas el café?", "con leche de avena", "tomo el café con leche de avena"),
    ("How do you take your coffee?", "with oat milk", "I take my coffee with oat milk"),
    ("¿Sigues yendo al coro?", "sí, cada dos jueves", "voy al coro, cada dos jueves"),
    ("¿Sigues yendo al coro?", "no, lo dejé", "ya no voy al coro, lo dejé"),
    ("¿Sigues tocando el piano?", "sí", "toco el piano"),
    ("Do you still go to choir practice?", "yes, every other Thursday",
     "I still go to choir practice, every other Thursday"),
    ("Do you still ride horses?", "yes", "I still ride horses"),
    ("Do you still ride horses?", "no", "I no longer ride horses"),
    ("Are you still learning Italian?", "no", "I am no longer learning Italian"),
    ("Does your sister still live in Leeds?", "yes", "my sister still lives in Leeds"),
    ("What's your son's name?", "Oliver", "my son's name is Oliver"),
    ("What's your dog called?", "Bailey", "my dog's name is Bailey"),
    ("¿Cómo se llama la encargada de Ferretería Sanz?", "Pilar", "la encargada de Ferretería Sanz se llama Pilar"),
    ("Where's your office?", "on Baker Street", "my office is on Baker Street"),
])
def test_a_reply_says_the_statement_its_question_asks_for(question, reply, statement):
    assert completed_answer(question, reply) == statement


@pytest.mark.parametrize("question, reply", [
    ("¿Te preparo la factura de Reformas Ibáñez?", "sí, porfa"),  # on what the asker does
    ("¿Qué precio le pongo a la partida de fontanería?", "1.500 redondos"),
    ("¿Necesitas algo más?", "no, nada más, gracias"),
    ("¿Quieres que lo mande?", "sí"),
    ("¿Qué tal el fin de semana?", "bien, tranquilo"),
    ("¿Cuándo quieres que te avise?", "no sé, ya veremos"),
    ("Shall I send the reminder to Harbor Foods?", "yes please"),
    ("Do you want me to send it?", "yes"),
    ("How are you doing today?", "good, thanks!"),
    ("What time do you open?", "not sure"),
    ("Do you have any questions?", "no"),  # on the conversation
    ("¿Tienes alguna duda?", "no"),
    ("Are you still there?", "yes"),
])
def test_a_reply_to_an_offer_or_small_talk_or_a_shrug_says_nothing(question, reply):
    assert completed_answer(question, reply) is None


def reply(session, backend, org, user, question, text):
    """The assistant asks `question`, `user` answers `text`; the worker runs on the answer. Committed."""
    ingest_message(session, channel="web", conversation="chat-1", external_id="a-1", org_id=org.id, user_id=user.id,
                   phone=None, role="assistant", text=question)
    r = ingest_message(session, channel="web", conversation="chat-1", external_id="m-1", org_id=org.id,
                       user_id=user.id, phone=None, role="user", text=text)
    session.commit()
    out = process_message(session, r.message_id, backend)
    session.commit()
    return out


def learnt(session, org, user):
    return session.scalars(select(Memory).where(Memory.status == "active", (Memory.org_id == org.id) |
                                                (Memory.owner_user_id == user.id))).all()


@pytest.mark.parametrize("question, text, subject, said", [
    ("¿A qué hora abrís los sábados?", "a las diez", "org", ("sábados", "a las diez")),
    ("What time do you open on Saturdays?", "at ten", "org", ("Saturdays", "at ten")),
    ("¿Cómo tomas el café?", "con leche de avena", "self", ("café", "leche de avena")),
    ("How do you take your coffee?", "with oat milk", "self", ("coffee", "oat milk")),
    ("¿Sigues yendo al coro?", "sí, cada dos jueves", "self", ("coro", "cada dos jueves")),
    ("Do you still go to choir practice?", "yes, every other Thursday", "self", ("choir", "every other Thursday")),
    ("¿Sigues yendo al gimnasio?", "no, lo dejé", "self", ("gimnasio", "lo ha dejado")),  # a pastime given up
    ("Do you still ride horses?", "yes", "self", ("ride horses", "yes")),
    ("¿Sigues yendo al coro?", "sí", "self", ("coro",)),
    # a yes or a no with what it adds, longer than a few words
    ("Do you still volunteer?", "yes, every other Thursday at the community center", "self",
     ("volunteer", "every other Thursday at the community center")),
    ("¿Sigues con el teatro?", "no, lo dejé cuando nació mi segundo hijo", "self", ("teatro", "segundo hijo")),
    # a place said as a phrase, longer than a few words
    ("¿Dónde tenéis el almacén?", "en el polígono de Vallecas, nave 4", "org", ("almacén", "Vallecas, nave 4")),
    # a question typed without its "¿", after an interjection
    ("jo, y a qué hora abrís los sábados?", "a las diez", "org", ("sábados", "a las diez")),
    # what a customer owes, said roughly
    ("How much does Harbor Foods owe you?", "about 3,600 euros", "name:harbor foods", ("3.600",)),
    # ... and so is a manner
    ("¿Cómo te gusta el gin-tonic?", "con mucho hielo y una rodaja de limón", "self", ("gin-tonic", "rodaja de limón")),
    ("How do you like your steak?", "with a bit of pink in the middle and lots of pepper", "self",
     ("steak", "lots of pepper")),
    # whose by the question: the business's premises, or the person's own day at them
    ("Is your shop open on Sundays?", "no, never on Sundays", "org", ("shop", "never")),
    ("What time does the warehouse close on Fridays?", "half past five", "org", ("warehouse", "half past five")),
    ("¿A qué hora sales de la oficina?", "a las seis normalmente", "self", ("sales de la oficina", "a las seis")),
])
def test_a_short_reply_is_learnt_with_what_it_answers(factory, system_session, backend, question, text, subject,
                                                      said):
    org = factory.org()
    ana = factory.member(org, role="owner")
    assert reply(system_session, backend, org, ana, question, text).outcome == "learnt"
    [m] = learnt(system_session, org, ana)
    assert m.subject == subject
    assert all(words in m.value for words in said), m.value


def test_a_pet_s_name_given_as_a_reply_is_the_pet_s_name(factory, system_session, backend):
    org = factory.org()
    ana = factory.member(org, role="owner")
    assert reply(system_session, backend, org, ana, "What's your dog called?", "Bailey").outcome == "learnt"
    [m] = learnt(system_session, org, ana)
    assert (m.subject, m.level) == ("self", "personal")
    assert "Bailey" in m.value and "dog" in m.value


@pytest.mark.parametrize("question, text", [
    ("¿Te lo recuerdo mañana a primera hora?", "jaja vale"),
    ("¿Cuándo quieres que te avise?", "no sé"),
    ("Should I send the invoice to Harbor Foods now?", "ok"),
    ("Want me to add it to your calendar?", "thanks!"),
    ("¿Te preparo la factura de Reformas Ibáñez?", "sí, porfa"),
    ("Do you want me to send it?", "yes"),
    ("¿Te preparo la factura de Reformas Ibáñez?", "sí, y recuérdame llamar a Talleres García mañana"),
    ("Shall I prepare the invoice for Harbor Foods?", "yes, and send a copy to their accounts email too please"),
])
def test_a_reply_that_answers_nothing_is_not_learnt(factory, system_session, backend, question, text):
    org = factory.org()
    ana = factory.member(org, role="owner")
    assert reply(system_session, backend, org, ana, question, text).outcome != "learnt"
    assert learnt(system_session, org, ana) == []
