"""The content policy, run with the exclusion list exactly as the migration seeds it."""
import re

import pytest

from memory_core.domain.policy import (
    Exclusion,
    PolicyVerdict,
    ccc_valid,
    check_text,
    dni,
    find_bank_account,
    iban_valid,
    luhn,
    pattern_error,
)
from memory_core.domain.protected_topics import names_topic_only, without_topic_mentions
from tests.support.migrations import migration


def _seed() -> list[Exclusion]:
    health = migration("x2_health_gp_surgery")  # changes the seeded health pattern
    return [Exclusion(*row) if row[1] != "health" else Exclusion(row[0], row[1], health.PATTERN, *row[3:])
            for row in migration("0002_rls_roles_seed").SEED] + \
        [Exclusion("special", name, pattern, None, description)
         for seeded in ("w2_special_patterns", "w5_special_smoking", "w6_special_allergies", "w7_special_coeliac",
                        "w8_special_conditions")
         for name, pattern, description in migration(seeded).ROWS] + \
        [Exclusion("secret", name, pattern, None, description)
         for name, pattern, description in migration("w9_secret_access_codes").ROWS]


SEED = _seed()


def verdict(text: str) -> PolicyVerdict:
    return check_text(text, SEED)


@pytest.mark.parametrize("text", [
    "mi contraseña es hunter2",
    "la password del portal de Acme: Qwerty.2024",
    "el PIN de la tarjeta es 4321",
    "el código de verificación es 482913",
    "your verification code is 118204",
    "te paso la api key: sk-proj-AbC123dEf456GhI789jKl",
    "token: ghp_ABCDEFGHIJKLMNOPQRSTuvwxyz012345",
    "las credenciales de AWS son AKIAIOSFODNN7EXAMPLE",
    "stripe sk_live_4eC39HqLyjWDarjtT1zdp7dc",
    "mi tarjeta es 4111 1111 1111 1111",
    "card 5555-5555-5555-4444 exp 12/27",
    "paga con la 378282246310005",
    "mi DNI es 12345678Z",
    "NIE X1234567L",
    "mi número de la seguridad social es 28 1234567890",
    "SSN 078-05-1120",
    "el pasaporte de Pablo es PAA123456",
    "el código de la alarma es 1234",
    "the key safe code is 4821",
    "código del portal 4821",
    "the lockbox combo is 381276",
    "door code for the back entrance is 5590",
    "la clave del wifi es girasol22",
    "the code for the key safe is 381276",
    "keysafe by the door, code 381276",
    "381276 is the code for the alarm",
    "la combinación del candado es 381276",
    "the code to get into the building is 381276",
])
def test_secrets_are_refused(text):
    result = verdict(text)
    assert result.refused, text


@pytest.mark.parametrize("text, rule", [
    ("mi contraseña es hunter2", "password"),
    ("el código de verificación es 482913", "verification_code"),
    ("sk-proj-AbC123dEf456GhI789jKl", "api_key"),
    ("4111 1111 1111 1111", "card_number"),
    ("12345678Z", "national_id"),
])
def test_the_rule_that_matched_is_named(text, rule):
    assert verdict(text).secret == rule


def test_luhn_invalid_invoice_number_is_not_a_card():
    assert not luhn("4111 1111 1111 1112")
    assert verdict("la factura 2024 0001 0000 1234 está pagada").secret is None
    assert verdict("referencia del pedido 1234567812345678").secret is None


def test_zero_padded_numbers_are_not_cards():
    assert not luhn("0000000000000000")
    assert verdict("albarán 0000000000000000").secret is None


def test_dni_needs_the_right_letter():
    assert dni("12345678Z") and dni("12345678-z") and dni("X1234567L") and dni("Y 1234567 X")
    assert not dni("12345678A")
    assert verdict("mi DNI es 12345678A").secret is None
    assert verdict("el NIF de Acme es B12345678").secret is None  # a company's CIF is business data


def test_iban_detection():
    assert iban_valid("ES9121000418450200051332")
    assert not iban_valid("ES9121000418450200051333")
    assert find_bank_account("el IBAN de Acme es ES91 2100 0418 4502 0005 1332 desde hoy") == "ES9121000418450200051332"
    assert find_bank_account("nueva cuenta: es9121000418450200051332.") == "ES9121000418450200051332"
    assert find_bank_account("GB82 WEST 1234 5698 7654 32 is the UK one") == "GB82WEST12345698765432"
    assert find_bank_account("DE89370400440532013000") == "DE89370400440532013000"
    assert find_bank_account("ES91 2100 0418 4502 0005 1333") is None
    assert find_bank_account("Talleres García paga a 60 días") is None


def test_spanish_ccc_detection():
    assert ccc_valid("21000418450200051332")
    assert find_bank_account("cuenta 2100-0418-45-0200051332") == "21000418450200051332"
    assert find_bank_account("cuenta 2100 0418 46 0200051332") is None


def test_an_iban_is_a_bank_account_not_a_card():
    # Runs of digits inside an IBAN must not be read as a card number that happens to pass Luhn.
    # The seeded pattern used to read "1648 7059 6402 3592" below as a Luhn-valid card (9% of grouped IBANs).
    for iban in ["ES53 1648 7059 6402 3592 5634", "ES91 2100 0418 4502 0005 1332", "ES7921000813610123456789"]:
        result = verdict(f"el IBAN de Acme es {iban}")
        assert result.secret is None, iban
        assert result.bank_account is not None


@pytest.mark.parametrize("text, rule", [
    ("a mi hijo le han diagnosticado diabetes", "health"),
    ("estoy de baja médica hasta el lunes", "health"),
    ("my wife is pregnant", "health"),
    ("she had surgery on her knee last week", "health"),
    ("Laura es musulmana", "religion"),
    ("he is Catholic", "religion"),
    ("voto al partido verde", "politics"),
    ("estoy afiliado al sindicato", "politics"),
    ("my colleague is gay", "sexual_orientation"),
    ("su origen étnico es gitano", "ethnicity"),
    ("usamos huella dactilar para fichar", "biometric"),
    ("Voy a Alcohólicos Anónimos los lunes", "addiction"),
    ("he has been sober since rehab", "addiction"),
    ("mi psicóloga dice que descanse más", "mental_health"),
    ("my therapist says I should slow down", "mental_health"),
    ("Ya no voy a misa los domingos", "worship"),
    ("we go to church every Sunday", "worship"),
    ("He dejado de fumar hace tres meses", "smoking_drinking"),
    ("I quit drinking last year", "smoking_drinking"),
    ("mi socio fuma como un carretero, fumador de toda la vida", "smoking_drinking"),
    ("she vapes at work", "smoking_drinking"),
    ("Mrs Okafor is allergic to nuts, so nothing with almonds in her orders", "allergies"),
    ("Soy alérgica al marisco", "allergies"),
    ("el niño de los Ruiz tiene alergia a la leche", "allergies"),
    ("Mi mujer es vegetariana y yo celíaco, tenlo en cuenta para las reservas", "coeliac"),
    ("Tom at Riverside Deli is coeliac, so nothing with wheat for him", "coeliac"),
    ("mi hija tiene celiaquía", "coeliac"),
    ("my son uses an inhaler for his asthma, he's playing football on saturday", "conditions"),
    ("tengo asma, siempre llevo el ventolin en el bolso", "conditions"),
    ("Iker es epiléptico, que no conduzca la furgoneta", "conditions"),
    ("se pincha insulina antes de comer", "conditions"),
    ("she takes metformin every morning", "conditions"),
])
def test_special_categories(text, rule):
    result = verdict(text)
    assert result.special == rule and not result.refused


@pytest.mark.parametrize("text", [
    "Talleres García paga a 60 días",
    "el contacto de Acme es Laura",
    "Acme prefiere las facturas por email",
    "llámame Pablo y trátame de tú",
    "estamos en el régimen de recargo de equivalencia",
    "la factura 2024-0153 vence el 15 de marzo",
    "el NIF de Construcciones Pérez es B87654321",
    "mi hijo se llama Juan",
    "Acme tiene una reclamación judicial pendiente con su proveedor",
    "el pasaporte de Pablo caduca pronto",
    "llámame al 600 123 456",
    "our contact at Acme is Laura, she prefers email",
    "a Hierros del Norte le hacemos un 5% de descuento",
    "la nueva tienda está en la Calle de la Iglesia 5",
    "our office moved to 12 Church Road",
    "Voy a pilates los martes",
    "our physiotherapist comes on Thursdays",
    "la rehabilitación de la fachada acaba en mayo",
    "no se puede fumar en la tienda",  # a rule of the premises, no one's habit
    "starting on the 2nd of June as practice nurse at a GP surgery in Camden",  # a workplace
    "the doctor's surgery is shut on Fridays, book the delivery for Thursday",
    "the smoking area is behind the warehouse",
    "la carta de alérgenos está colgada en la entrada",  # a menu's allergens are no one's health
    "tenemos pan sin gluten para celíacos",
    "we do a gluten-free range for coeliacs",
    "every dish lists its allergens",
    "we sell inhalers and nebulisers to the clinics",  # a shop's stock is no one's health
    "la farmacia de la esquina nos paga a 30 días",
    "cambia el código de la alarma mañana, que lo sabe demasiada gente",  # no code in it
    "the gate code changes every month",
    "el código postal de la oficina es 28013",
    "the discount code for the shop is SPRING10",
    "the shop opens at 9:30 and closes at 1730",
])
def test_ordinary_business_facts_pass_clean(text):
    assert verdict(text).clean, (text, verdict(text))


def test_org_rows_and_bad_rows():
    custom = [Exclusion("secret", "internal_project", r"\bproyecto f[eé]nix\b"),
              Exclusion("secret", "broken", r"(unclosed"),
              Exclusion("secret", "weird_validator", r"\bcosa\b", "nope")]
    assert check_text("el Proyecto Fénix arranca", custom).secret == "internal_project"
    assert check_text("otra cosa", custom).secret == "weird_validator"  # unknown validator: refuse
    assert check_text("nada", custom).clean
    assert pattern_error("(unclosed") and pattern_error(r"\bok\b") is None


@pytest.mark.parametrize("text", [
    "I ran a charity race for mental health last Saturday",
    "El sábado corrí una carrera solidaria por la salud mental",
    "Next month I'm having an LGBTQ art show with my paintings",
    "El mes que viene hago una exposición LGTBI con mis cuadros",
    "We went to a church fair to sell paintings",
    "Fuimos al mercadillo de la iglesia a vender cuadros",
    "I'm looking into counseling and mental health as a career",
    "Quiero trabajar en salud mental",
    "I volunteer at a support group",
    "Colaboro como voluntaria en un grupo de apoyo",
    "I'm hoping to get into local politics",
    "Quiero meterme en política local",
])
def test_a_protected_topic_named_as_a_cause_field_or_event_is_no_one_s_data(text):
    masked = without_topic_mentions(text)
    assert masked != text and check_text(masked, SEED).special is None
    assert not re.search(r"(?i)\b(?:health|salud|lgbtq|lgtbi|church|iglesia|politics|pol[ií]tica|support group|"
                         r"grupo de apoyo)\b", masked)


@pytest.mark.parametrize("text", [
    "I was diagnosed with diabetes", "Me diagnosticaron diabetes",
    "I'm gay", "Soy gay", "I'm transgender", "Soy transgénero",
    "I went to an LGBTQ support group yesterday", "Ayer fui a un grupo de apoyo LGTB",
    "I go to a support group for my anxiety", "Voy a un grupo de apoyo por mi ansiedad",
    "I had a great hike with my church friends", "Fui de excursión con mis amigos de la iglesia",
    "This has been great for my mental health", "Esto me ha ido muy bien para mi salud mental",
    "I raised money for cancer research after my diagnosis",
    "I support conservative politics", "I'm passionate about progressive politics",
])
def test_a_person_s_own_protected_data_keeps_every_protected_word(text):
    masked = without_topic_mentions(text)
    assert not names_topic_only(text) or re.search(r"(?i)diagnos|anxiety|ansiedad", masked)


@pytest.mark.parametrize("text", [
    "el veterinario dice que es alérgico al pollo, así que ojo con los premios y el pienso",
    "the vet says she's allergic to chicken and needs grain-free food",
])
def test_what_the_vet_said_of_an_animal_is_no_one_s_health_data(text):
    assert verdict(text).special is not None  # the words alone read as someone's health
    assert check_text(without_topic_mentions(text), SEED).special is None


@pytest.mark.parametrize("text", ["el veterinario dice que mi hijo es alérgico al pelo del perro",
                                  "the vet says I'm allergic to the cat"])
def test_a_person_named_beside_the_vet_keeps_the_health_words(text):
    assert check_text(without_topic_mentions(text), SEED).special is not None
