"""The memory block on conversations: every line shows its date, a "when" question brings the dated
memory first, one telling word is enough to be related, told notes stay out of the core and near-identical
memories show once; in Spanish and in English, with the real database and the local embedder."""
from __future__ import annotations

import datetime as dt

import pytest

from memory_core.domain.access import load_access
from memory_core.domain.models import MemorySource
from memory_core.reading.context import BLOCK_MAX_CHARS, PROFILE_MAX_ITEMS, assemble_context, estimate_tokens
from memory_core.reading.dating import asks_when, named_date

SAID = dt.datetime(2023, 5, 8, 13, 56, tzinfo=dt.timezone.utc)
NOW = dt.datetime(2023, 7, 1, 10, 0, tzinfo=dt.timezone.utc)
PLACES = """Noruega Suecia Finlandia Islandia Polonia Hungría Rumanía Bulgaria Grecia Turquía Egipto Marruecos Túnez
Kenia Chile Perú Bolivia Uruguay Paraguay Ecuador Panamá Cuba Jamaica Haití""".split()


class World:
    def __init__(self, factory, system_session, database, embedder):
        self.f, self.s, self.db, self.e = factory, system_session, database, embedder
        self.org = factory.org("Sumalos")
        self.me = factory.member(self.org, role="owner", name="Pablo")
        self.notes = 0

    def told(self, value, *, said=SAID, attribute=None, category="person", confidence=0.9, **kw):
        """A note the person told about themself, learnt from a message sent at `said`."""
        self.notes += 1
        attribute = attribute or f"nota_dicho__{self.notes}"
        return self.f.memory(None, level="personal", owner=self.me, subject="self", attribute=attribute,
                             value=value, sentence=value, category=category, valid_from=said, confidence=confidence,
                             embedding=self.e.embed([value])[0], embed_model=self.e.model_name, **kw)

    def told_in(self, conversation, value, *, said):
        """A note learnt from a message of `conversation` sent at `said` (the memory names its source)."""
        message = self.f.message(conversation, value, sent_at=said)
        fact = self.told(value, said=said, confidence=0.1)
        self.s.add(MemorySource(memory_id=fact.id, message_id=message.id, conversation_id=conversation.id))
        self.s.commit()
        return fact

    def crowd(self, n=PROFILE_MAX_ITEMS + 2):
        """More, fresher and surer memories than the profile holds, so the ones under test can only come in
        as related."""
        for place in PLACES[:n]:
            self.told(f"Colecciono sellos de {place}", attribute=f"nota_sellos_{place.lower()}", confidence=0.99,
                      said=NOW - dt.timedelta(days=1))

    def turn(self, message, now=NOW):
        access = load_access(self.s, self.org.id, user_id=self.me.id)
        conv = self.f.conversation(self.org, self.me)
        with self.db.unit_of_work(access.scope()) as uow:
            block = assemble_context(uow.session, access, conv.id, message, now=now, embed=self.e.embed,
                                     embed_model=self.e.model_name)
            uow.commit()
        return block


@pytest.fixture
def world(factory, system_session, database, embedder):
    return World(factory, system_session, database, embedder)


@pytest.mark.parametrize("text, said, shown", [
    ("el 3 de mayo fuimos a Valencia", dt.date(2023, 5, 8), "2023-05-03"),
    ("On May 3rd we went to Valencia", dt.date(2023, 5, 8), "2023-05-03"),
    ("Ayer fui al grupo de apoyo", dt.date(2023, 5, 8), "2023-05-07"),
    ("I went to a LGBTQ support group yesterday", dt.date(2023, 5, 8), "2023-05-07"),
    ("Pinté ese amanecer el año pasado", dt.date(2023, 5, 8), "2022"),
    ("I painted that lake sunrise last year", dt.date(2023, 5, 8), "2022"),
    # Years ago name their year.
    ("I started surfing five years ago", dt.date(2023, 5, 8), "2018"),
    ("Empecé a hacer surf hace unos cinco años", dt.date(2023, 5, 8), "2018"),
    ("I started volunteering here about a year ago", dt.date(2023, 8, 14), "2022"),
    ("Empecé de voluntaria aquí hace un año", dt.date(2023, 8, 14), "2022"),
    ("Voy el 20 de junio a Sevilla", dt.date(2023, 5, 8), "2023-06-20"),
    ("My daughter's birthday is on 13 August", dt.date(2023, 8, 14), "2023-08-13"),
    ("Tengo dos críos, Pau y Marina", dt.date(2023, 5, 8), None),
    ("I have 2 kids", dt.date(2023, 5, 8), None),
])
def test_a_remembered_sentence_names_its_date_read_against_the_day_it_was_said(text, said, shown):
    assert named_date(text, said) == shown


@pytest.mark.parametrize("value, said_in", [
    ("el 3 de mayo fuimos a Valencia", "(2023-05-03)"),
    ("On May 3rd we went to Valencia", "(2023-05-03)"),
])
def test_a_memory_shows_its_event_date_in_the_block(world, value, said_in):
    world.told(value)
    block = world.turn("hola")
    assert f"<<<{value}>>> {said_in}" in block.profile


@pytest.mark.parametrize("value, message, shown", [
    ("Toco el violín en una orquesta", "hola, ¿qué tal?", "(dicho el 2023-05-08)"),
    ("I play the violin in an orchestra", "hi, how are you doing?", "(said 2023-05-08)"),
])
def test_a_memory_without_a_date_of_its_own_shows_when_it_was_said_in_the_readers_language(world, value, message,
                                                                                            shown):
    world.told(value)
    block = world.turn(message)
    assert f"<<<{value}>>> {shown}" in block.profile
    assert ("dicho el" in block.text) == ("dicho" in shown) and ("(said" in block.text) == ("said" in shown)


@pytest.mark.parametrize("dated, undated, question", [
    ("El 3 de mayo fuimos a Valencia con los críos", "Valencia nos encanta, volveremos con los críos",
     "¿Cuándo fuimos a Valencia?"),
    ("On May 3rd we went to Valencia with the kids", "We love Valencia, we'll go back with the kids",
     "When did I go to Valencia?"),
])
def test_asking_when_brings_the_memory_that_tells_the_date_first(world, dated, undated, question):
    world.crowd()
    first = world.told(dated)
    world.told(undated, said=SAID + dt.timedelta(days=20))
    block = world.turn(question)
    related = [i.memory_id for i in block.items if i.block == "related"]
    assert related[:1] == [first.id]
    assert "(2023-05-03)" in block.related


@pytest.mark.parametrize("question", ["¿Cuándo fuimos a Valencia?", "When did I go to Valencia?",
                                      "¿Qué hice en mayo?", "What did I do yesterday?"])
def test_a_when_question_or_a_period_is_told_apart(question):
    assert asks_when(question, NOW)
    assert not asks_when("¿Qué libro me recomendaste?", NOW) and not asks_when("Which book do I like?", NOW)


@pytest.mark.parametrize("value, question", [
    ("Mi libro favorito de pequeña era Momo", "¿Qué libro leía de niña?"),
    ("My favourite book as a kid was Charlotte's Web", "Which book did I enjoy reading as a child?"),
])
def test_one_shared_word_that_is_not_a_common_one_makes_a_memory_related(world, value, question):
    world.crowd()
    fact = world.told(value, confidence=0.1)
    block = world.turn(question)
    assert [i.block for i in block.items if i.memory_id == fact.id] == ["related"]


@pytest.mark.parametrize("value, question", [
    ("Talleres García paga a 60 días", "¿Cuántos días de vacaciones me quedan este año?"),
    ("Talleres García pays at 60 days", "How many days of holiday do I have left this year?"),
])
def test_one_shared_common_word_does_not(world, value, question):
    world.crowd()
    fact = world.told(value, confidence=0.1, said=NOW - dt.timedelta(days=2))
    assert fact.id not in world.turn(question).memory_ids


@pytest.mark.parametrize("note, question", [
    ("Fuimos de acampada con la familia la semana pasada", "hola"),
    ("We went camping with the family last week", "hi there"),
])
def test_a_told_note_is_not_a_core_fact_but_shows_in_the_profile_with_its_date(world, note, question):
    world.told("Pablo", attribute="nombre")
    world.told(note)
    block = world.turn(question)
    assert "Pablo" in block.core and note not in block.core
    assert f"<<<{note}>>> (" in block.profile


@pytest.mark.parametrize("first, second, question", [
    ("Me encanta mi clase de cerámica de los lunes", "¡Me encanta mucho mi clase de cerámica de los lunes!",
     "¿Qué clase de cerámica hago los lunes?"),
    ("I love my pottery class on Mondays", "I really love my pottery class on Mondays!",
     "Which pottery class do I take on Mondays?"),
])
def test_near_identical_memories_show_once(world, first, second, question):
    world.crowd()
    world.told(first, confidence=0.1)
    world.told(second, confidence=0.1, said=SAID + dt.timedelta(days=3))
    block = world.turn(question)
    assert block.text.count("cerámica" if "cerámica" in first else "pottery") == 1


@pytest.mark.parametrize("value, question", [
    ("Me he apuntado a un gimnasio nuevo", "¿Qué te conté el 16 de junio de 2023?"),
    ("I joined a new gym", "What did I tell you on 16 June, 2023?"),
])
def test_a_question_about_a_day_finds_what_was_said_that_day(world, value, question):
    world.crowd()
    fact = world.told(value, confidence=0.1, said=dt.datetime(2023, 6, 16, 18, 0, tzinfo=dt.timezone.utc))
    block = world.turn(question)
    assert [i.block for i in block.items if i.memory_id == fact.id] == ["related"]
    assert "2023-06-16" in block.related


@pytest.mark.parametrize("value, question", [
    ("De niña me encantaba leer Momo", "¿Cuál era mi libro favorito de pequeña?"),
    ("I explored nature and roasted marshmallows by the campfire", "What did I do on the camping trip?"),
])
def test_a_question_brings_the_sentence_that_answers_it_though_they_share_no_word(world, value, question):
    world.crowd()
    fact = world.told(value, confidence=0.1)
    block = world.turn(question)
    assert [i.block for i in block.items if i.memory_id == fact.id] == ["related"]


THINGS = {"es": """cuenco jarrón taza plato tetera maceta jarra bandeja fuente azucarero lámpara figura salero botijo
             cenicero huevera""".split(),
          "en": """bowl vase mug plate teapot planter jug tray platter sugarbowl lamp figurine saltshaker pitcher
             ashtray eggcup""".split()}
COLOURS = {"es": "azul verde rojo amarillo blanco negro morado naranja rosa gris marrón dorado plateado turquesa "
                 "granate ocre".split(),
           "en": "blue green red yellow white black purple orange pink grey brown golden silver turquoise maroon "
                 "ochre".split()}


@pytest.mark.parametrize("lang, sentence, question", [
    ("es", "En la clase de cerámica del {n} de mayo modelé un {thing} {colour} para la casa de mi hermana",
     "¿Qué piezas he hecho en la clase de cerámica?"),
    ("en", "In pottery class on May {n} I shaped a {colour} {thing} for my sister's new house",
     "Which pieces have I made in pottery class?"),
])
def test_a_question_with_many_answers_gets_more_of_them_and_the_block_keeps_its_budget(world, lang, sentence,
                                                                                       question):
    world.crowd()
    facts = [world.told(sentence.format(n=n + 1, thing=thing, colour=colour), confidence=0.1)
             for n, (thing, colour) in enumerate(zip(THINGS[lang], COLOURS[lang]))]
    block = world.turn(question)
    related = {i.memory_id for i in block.items if i.block == "related"}
    assert len(related & {f.id for f in facts}) > 8
    assert len(block.text) <= BLOCK_MAX_CHARS and block.tokens == estimate_tokens(block.text) <= 1_200


@pytest.mark.parametrize("matched, next_to_it, elsewhere, question", [
    ("Fui a ver la cascada de Multnomah en Oregón", "Me sentí como dentro de un cuento de hadas",
     "Me sentí como una reina en la boda de mi prima", "¿Qué tal la excursión a la cascada de Oregón?"),
    ("I went to see the Multnomah waterfall in Oregon", "I felt like I was in a fairy tale!",
     "I felt like a queen at my cousin's wedding", "What was the trip to the waterfall in Oregon like?"),
])
def test_what_was_told_right_after_the_matching_memory_comes_with_it(world, matched, next_to_it, elsewhere,
                                                                     question):
    world.crowd()
    trip = world.f.conversation(world.org, world.me)
    first = world.told_in(trip, matched, said=SAID)
    second = world.told_in(trip, next_to_it, said=SAID + dt.timedelta(seconds=40))
    wedding = world.told_in(world.f.conversation(world.org, world.me), elsewhere, said=SAID + dt.timedelta(days=9))
    block = world.turn(question)
    related = [i.memory_id for i in block.items if i.block == "related"]
    assert first.id in related and second.id in related
    assert wedding.id not in related
