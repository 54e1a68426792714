"""What the Spanish chat conversations (evals/conversations_es) taught the local extractor, each rule on the
fact a user would check, in Spanish and, where it applies, English; and the bench's Spanish answer check."""
from __future__ import annotations

import datetime as dt
import importlib.util
from pathlib import Path

from memory_core.backends.local_extractor import LocalExtractor
from memory_core.backends.local_extractor.fallback import writer_statement
from memory_core.backends.local_extractor.personal import told_in_past
from memory_core.backends.local_extractor.text import fold
from memory_core.backends.local_extractor.units import units
from memory_core.domain.model_port import ExtractionContext, GateDecision
from memory_core.reading.dating import named_date

SAID = dt.date(2022, 12, 15)  # a Thursday


def _passing(category: str, scope: str):
    """A gate that passes every unit, as `category` and `scope`."""
    def judge(texts: list[str]) -> list[GateDecision]:
        return [GateDecision(remember=0.95, category={category: 0.9, "nothing": 0.1}, scope={scope: 1.0},
                             corrects=0.0, insult=0.0, special=0.0, bank_account=0.0) for _ in texts]
    return judge


def facts(text, category="person", scope="personal", today=SAID):
    ctx = ExtractionContext(message=text, today=today, gate_category=category, gate_scope=scope,
                            reference_time=dt.datetime.combine(today, dt.time(12), tzinfo=dt.timezone.utc))
    return LocalExtractor(judge=_passing(category, scope)).extract(ctx)[0]


def test_spanish_chat_openers_are_cut_from_what_is_told():
    told = {m: [u.text for u in units(m) if not u.phatic] for m in (
        "muy bien, ayer entrevisté a una directora danesa para el diario",
        "y he organizado una ruta a Güéjar Sierra el 20 de noviembre con clientes",
        "sí. y encima el proveedor de italia me ha subido los precios un 8%",
        "por aquí buenas noticias: el gimnasio nos pagó todo el lunes")}
    assert list(told.values()) == [["Ayer entrevisté a una directora danesa para el diario"],
                                   ["He organizado una ruta a Güéjar Sierra el 20 de noviembre con clientes"],
                                   ["El proveedor de italia me ha subido los precios un 8%"],
                                   ["El gimnasio nos pagó todo el lunes"]]
    # A word of the fact stays: "muy", "ya" with no comma after them.
    assert [u.text for u in units("el vino es muy bueno")] == ["El vino es muy bueno"]
    assert [u.text for u in units("ya he terminado el curso")] == ["Ya he terminado el curso"]


def test_a_spanish_preterite_with_a_weekday_is_a_dated_past_event():
    (event,) = [f for f in facts("por aquí buenas noticias: el gimnasio nos pagó todo el lunes")
                if f.category == "event"]
    assert (event.subject, event.event_date) == ("self", dt.date(2022, 12, 12))
    assert "pagó" in event.value
    (trip,) = [f for f in facts("se fue el sábado a Buenos Aires") if f.category == "event"]
    assert trip.event_date == dt.date(2022, 12, 10)
    # A future ("pagaré", "iré") and words that only end like a preterite are not told in the past.
    assert not told_in_past(fold("pagaré el lunes"), "pagaré el lunes")
    assert not told_in_past(fold("aquí esquí el lunes"), "aquí esquí el lunes")
    assert told_in_past(fold("me pagaron la mitad"), "me pagaron la mitad")
    # English: unchanged, its past was read before.
    assert told_in_past("i went there on monday", "I went there on Monday")
    assert not told_in_past("i'll pay on monday", "I'll pay on Monday")


def test_a_spanish_verb_alone_tells_the_writers_own_life():
    # The gate less sure: a preterite is the writer's own doing; a perfect or a present only in a message the
    # gate passed (alone it is the day's errand: "He llegado tarde a la reunión").
    assert writer_statement("Ayer entrevisté a una directora danesa para el diario")
    assert writer_statement("Estuve con Canela toda la mañana en Carmona")
    assert not writer_statement("He llegado tarde a la reunión con Agencia Rumbo")
    assert writer_statement("He cerrado tres reportajes para el diario", loose=True)
    assert writer_statement("I interviewed a Danish director for the paper yesterday")
    assert writer_statement("Le ayudo en el bar los fines de semana", loose=True)
    assert not writer_statement("Le gustó mucho el bar de Pedro", loose=True)
    (note,) = facts("jaja ya, le ayudo en el bar los fines de semana")
    assert (note.subject, note.value) == ("self", "Le ayudo en el bar los fines de semana")
    (event,) = facts("muy bien, ayer entrevisté a una directora danesa para el diario")
    assert (event.subject, event.category, event.event_date) == ("self", "event", dt.date(2022, 12, 14))


def test_what_a_sentence_tells_of_a_customer_beyond_the_rules_is_kept_as_a_note():
    found = facts("el gimnasio Vértice me alquila 20 bicis de spinning y me paga a 45 días", category="customer",
                  scope="shared")
    assert {(f.subject, f.attribute, f.value) for f in found if f.attribute == "plazo_pago"} == \
        {("name:vertice", "plazo_pago", "45 días")}
    assert any(f.subject == "name:vertice" and "20 bicis de spinning" in f.value for f in found)
    found = facts("Harbor Foods pays us at 45 days and rents twelve delivery bikes from us every summer",
                  category="customer", scope="shared")
    assert any(f.attribute == "plazo_pago" for f in found)
    assert any("delivery bikes" in f.value for f in found)
    # Nothing more than the rules read: no note besides them.
    found = facts("Talleres García nos paga a 60 días por transferencia y siempre pide factura en papel",
                  category="customer", scope="shared")
    assert {f.attribute for f in found} == {"plazo_pago", "forma_pago", "formato_factura"}


def test_a_month_named_in_a_plan_is_the_coming_one():
    assert named_date("y en enero me voy a esquiar con nacho a la sierra", SAID) == "2023-01"
    assert named_date("I'm going skiing in January", SAID) == "2023-01"
    assert named_date("en septiembre vendimos 14 bicis", dt.date(2022, 10, 3)) == "2022-09"
    assert named_date("I went to Paris in May", dt.date(2023, 3, 1)) == "2022-05"


def _bench():
    path = Path(__file__).resolve().parents[1] / "bench" / "locomo_learn.py"
    spec = importlib.util.spec_from_file_location("locomo_learn", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_bench_reads_spanish_answers_and_a_folder_of_its_own(tmp_path):
    bench = _bench()
    assert bench.answer_dates("7 de mayo de 2023") == ["2023-05-07"]
    assert bench.answer_dates("del 6 al 10 de abril de 2023") == ["2023-04-10", "2023-04-06"]
    assert bench.answer_dates("febrero de 2023") == ["2023-02"]
    assert bench.answer_dates("7 May 2023") == ["2023-05-07"]  # English as before
    assert bench.answered("- Tú: <<<Óscar empieza el lunes>>> (2023-05-02)", "2 de mayo de 2023")
    assert bench.answered("- Tú: <<<la boda de Marta en el Molino de Ucero>>>", "en el molino de ucero")
    assert not bench.answered("- Tú: <<<la finca de Almazán>>>", "el Molino de Ucero")
    for name in ("es2", "es1"):
        (tmp_path / f"{name}.json").write_text("{}", encoding="utf-8")
    assert bench.default_conversations(tmp_path) == ["es1", "es2"]
    shared = Path(__file__).resolve().parents[2] / "shared" / "benchmarks" / "locomo10"
    if shared.is_dir():
        assert bench.default_conversations(shared) == list(bench.HELD_OUT)
        assert bench.default_conversations(shared, tune=True) == list(bench.TUNE)


def test_a_day_something_began_is_one_gone_by():
    (event,) = facts("bien, me han hecho jefa de recepción desde el 1 de febrero", today=dt.date(2024, 2, 12))
    assert (event.subject, event.event_date, event.value) == ("self", dt.date(2024, 2, 1),
                                                              "Me han hecho jefa de recepción")
    assert told_in_past(fold("trabajo en el hotel desde el 3 de marzo"), "trabajo en el hotel desde el 3 de marzo")
    # Only with its day: "desde casa" or "desde mañana" is no past.
    assert not told_in_past(fold("trabajo desde casa el 3 de marzo"), "trabajo desde casa el 3 de marzo")


def test_every_spanish_question_is_asked_by_a_speaker_who_told_its_evidence():
    # The bench builds the block for the speaker a question names (else the first): a question about what the
    # other one told would be measured on a block that cannot hold it.
    import json
    import re

    bench = _bench()
    folder = Path(__file__).resolve().parents[1] / "evals" / "conversations_es"
    paths = sorted(folder.glob("*.json")) + sorted((folder / "tune").glob("*.json"))
    assert len(paths) >= 4
    for path in paths:
        conv = json.loads(path.read_text(encoding="utf-8"))
        speakers = [conv["speaker_a"], conv["speaker_b"]]
        said_by = {t["dia_id"]: t["speaker"] for k, v in conv.items() if re.fullmatch(r"session_\d+", k) for t in v}
        for q in conv["qa"]:
            assert q["category"] in (1, 2, 3, 4) and q["evidence"] and all(e in said_by for e in q["evidence"])
            assert bench.asking_speaker(q["question"], speakers) in {said_by[e] for e in q["evidence"]}, q["question"]


def test_in_the_bench_a_reply_is_learnt_with_the_question_the_other_speaker_asked(database, servers):
    # Each speaker's conversation holds the other's turns as the assistant's: "sí, los sábados" is kept with
    # what it answers, and nothing is learnt from the question itself.
    from memory_core.backends import get_backend

    bench = _bench()
    conv = {"speaker_a": "Elena", "speaker_b": "Raúl", "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [{"speaker": "Elena", "dia_id": "D1:1", "text": "raúl! sigues con la hípica?"},
                          {"speaker": "Raúl", "dia_id": "D1:2", "text": "sí, los sábados"}]}
    loaded = bench.load_conversation(database, "es-test", conv)
    bench.drain(database, get_backend(servers))
    rows, sources, _ = bench.learnt(database, loaded)
    by_message = {m: [r.value for r in rows if m in sources.get(r.id, [])] for m in loaded["message_of"].values()}
    assert by_message[loaded["message_of"]["D1:2"]] == ["sigues con la hípica? — sí, los sábados"]
    assert by_message[loaded["message_of"]["D1:1"]] == []
    assert loaded["turns"] == 2


def test_an_english_note_is_told_in_english_however_few_its_function_words():
    # "of" against "me" had read as Spanish: "La persona: Here's a photo of le cooking a meal."
    [fact] = facts("Here's a photo of me cooking a meal")
    assert fact.sentence == "The person: Here's a photo of them cooking a meal."
    [fact] = facts("Me encanta esta foto")
    assert fact.sentence.startswith("La persona")
