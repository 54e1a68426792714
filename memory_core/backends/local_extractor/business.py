"""Rules for business facts: payment terms and methods, contact people, channels, formats, tax data,
addresses, discounts, email and phone, bank accounts.

Long on purpose (~430 lines): one short rule a business fact, each with its Spanish and English patterns;
the rules are read together because they share the helpers at the top and must not read each other's
sentences."""
from __future__ import annotations

import re
from collections.abc import Iterator

from memory_core.backends.local_extractor.clauses import DURABLE
from memory_core.backends.local_extractor.found import Found
from memory_core.backends.local_extractor.names import NAME_STOP, NOT_NAMES, looks_like_company, name_at
from memory_core.backends.local_extractor.personal import LANGUAGES
from memory_core.backends.local_extractor.text import Sentence, clean_value, fold
from memory_core.domain.dates import COUNTS, MONTH_WORD, WEEKDAY_WORD, WEEKDAYS
from memory_core.domain.ladder import OWN_BANK
from memory_core.domain.policy import BANKS, find_bank_account
from memory_core.domain.value_shapes import EMAIL

_NUM_WORDS = {"quince": 15, "veinte": 20, "treinta": 30, "cuarenta y cinco": 45, "sesenta": 60, "noventa": 90,
              "ciento veinte": 120, "fifteen": 15, "twenty": 20, "thirty": 30, "forty five": 45, "forty-five": 45,
              "sixty": 60, "ninety": 90}
_NUM = r"(?P<n>\d{1,3}|" + "|".join(sorted(_NUM_WORDS, key=len, reverse=True)) + ")"


def _days(n: str) -> str | None:
    value = _NUM_WORDS.get(n) or int(n)
    return f"{value} días" if 1 <= value <= 365 else None


_PAY_METHODS = {"transferencia bancaria": "transferencia", "transferencia": "transferencia",
                "recibo domiciliado": "domiciliación", "domiciliacion": "domiciliación", "recibo": "domiciliación",
                "tarjeta": "tarjeta", "bizum": "Bizum", "cheque": "cheque", "pagare": "pagaré",
                "efectivo": "efectivo", "paypal": "PayPal", "bank transfer": "transferencia",
                "transfer": "transferencia", "direct debit": "domiciliación", "card": "tarjeta", "cash": "efectivo",
                "check": "cheque"}
# Paying, said now or as what will happen ("nos va a pagar", "van a abonarnos").
_PAYS = r"(?:paga|pagan|pagara|pagaran|abona|abonan|(?:va|van)\s+a\s+(?:pagar|abonar)(?:nos|me|les?)?)"
_METHODS = "|".join(sorted(_PAY_METHODS, key=len, reverse=True))  # the longest first: "bank transfer" before "transfer"
_PAY_METHOD = re.compile(r"\b(?:" + _PAYS + r"|pays?(?: us)?)\b.{0,40}?\b(?:por|con|mediante|en|by|with|in)\s+"
                         r"(?:un\s+|una\s+)?(?P<v>" + _METHODS + r")\b")
_PAY_BY = r"(?:por|con|mediante|en)\s+(?:un\s+|una\s+)?(?:" + _METHODS + ")"
_PAYMENT_TERMS = [re.compile(p) for p in (
    rf"\b(?:nos\s+|me\s+)?{_PAYS}\s+(?:(?:siempre|ahora|ya|normalmente|las facturas|sus facturas|todo|{_PAY_BY})\s+)*(?:a|en|con)\s+(?:un plazo de\s+)?{_NUM}\s*(?:dias|d)\b",
    rf"\bplazo de (?:pago|cobro)\b.{{0,40}}?\b(?:es|son|sera|pasa a ser|de)\s+(?:de\s+)?{_NUM}\s*dias",
    rf"\bplazo\s+(?:es|son|sera|pasa a ser|esta en)\s+(?:de\s+|a\s+)?{_NUM}\s*dias",
    rf"\b(?:le|les)\s+(?:damos|dejamos|doy|dejo|cobramos|cobro|facturamos|facturo|pagamos|pago)\s+(?:siempre\s+|ahora\s+)?(?:a\s+)?{_NUM}\s*dias",
    rf"\b(?:nos|me)\s+(?:cobra|cobran|factura|facturan)\s+(?:siempre\s+|ahora\s+)?a\s+{_NUM}\s*dias",
    rf"\b(?:nos|me)\s+(?:da|dan|deja|dejan)\s+{_NUM}\s*dias\s+(?:para pagar|de plazo)",
    rf"\b(?:quedamos|quedado|acordamos|acordado|pactamos|pactado)\s+(?:en\s+)?(?:que\s+)?(?:nos\s+|les?\s+)?(?:pagar\w*|cobrar\w*|pague\w*)\s+a\s+{_NUM}\s*dias",
    rf"\b(?:cobramos|pagamos)\s+a\s+.{{1,40}}?\s+a\s+{_NUM}\s*dias",
    rf"\b(?:we|i)\s+(?:pay|invoice|bill)\s+(?!us\b|them\b|it\b).{{1,40}}?\s+(?:at|in|within|on|after)\s+{_NUM}\s*days",
    rf"\bpays?\s+(?:us\s+|its invoices\s+|their invoices\s+)?(?:now\s+)?(?:(?:at|in|within|on|after)\s+)?{_NUM}\s*days",
    rf"\bpayment terms?\b.{{0,30}}?\b(?:are|is|of)\s+(?:now\s+)?(?:net\s+)?{_NUM}(?:\s*days)?",
    rf"\b(?:we\s+)?give\s+(?:them|him|her)\s+{_NUM}\s*days",
    rf"\b(?:cobra|cobran)\s+(?:siempre\s+|ahora\s+)?a\s+{_NUM}\s*dias",
    rf"\b(?:pays?|terms?(?:\s+are|\s+is)?)\s+net\s*{_NUM}\b",
    # a move of the term, or one asked for and agreed: "have moved to 45 days", "asked to move to 45 days and we
    # agreed", "nos pidió pagar a 60 días y le dijimos que sí" (one refused stays no fact: clauses.REFUSED)
    rf"\b(?:moved|moving|switched|gone|changed)\s+(?:their\s+terms\s+)?to\s+{_NUM}\s*days",
    rf"\b(?:asked|wanted|want)\s+to\s+(?:move|go|pay)\s+(?:to|at)\s+{_NUM}\s*days\b(?=.*\b(?:agreed|said yes|accepted|"
    r"that's fine|ok'd|okayed)\b)",
    rf"\b(?:pidio|pidieron|ha pedido|han pedido|quiere|quieren|queria|querian)\s+(?:pagar(?:nos)?\s+)?a\s+{_NUM}\s*dias\b"
    r"(?=.*\b(?:(?:le|les)\s+(?:he|hemos)?\s*dicho que si|(?:le|les)\s+dij(?:e|imos) que si|aceptamos|acepte|vale)\b)",
)]
# "paga a 90", "pagan con pagaré a 90", "pagan a 60 por transferencia" (days implied; a small number is not a term), "no paga hasta los 75 días" (a
# floor, not a negation), "tarda unos dos meses en pagar" (a delay in weeks or months, read as days).
_BARE_TERMS = re.compile(r"\b(?:nos\s+|me\s+)?(?:paga|pagan|abona|abonan)\s+(?:siempre\s+|ahora\s+)?(?:" + _PAY_BY
                         + r"\s+)?a\s+(?:los\s+)?(?P<n>\d{1,3})(?:\s*,|\s*$|\s+(?:siempre|ahora|no|y|pero|desde|como)\b|\s+"
                         + _PAY_BY + r"\b)")
# A business's term said as what it "is" ("Ugarte es a 45, me equivoqué"): the word before the verb a name, written
# with its capital.
_IS_TERM = re.compile(r"(?:^|[,;]\s*)(?:[\w&'.-]+\s+){0,3}(?P<who>[\w&'.-]+)\s+(?:es|son|is|are)\s+(?:ahora\s+|now\s+)?a\s+"
                      r"(?P<n>\d{1,3})(?:\s*(?:dias|days))?(?=\s*(?:[,.;!]|$|y\b|and\b|no\b|not\b))")
_FLOOR_TERMS = re.compile(rf"\b(?:no|nunca|never|doesn'?t|don'?t)\s+(?:nos\s+|us\s+)?(?:paga|pagan|pay|pays)\s+"
                          rf"(?:\w+\s+){{0,3}}?(?:hasta|antes de|before|until)\s+(?:los\s+|the\s+)?"
                          rf"{_NUM}\s*(?:dias|days)")
# A payment term corrected in the same sentence: "ya no nos paga a 30, ahora a 45 días", "no longer pays at 30,
# now at 45 days".
_NOW_TERMS = re.compile(rf"\b(?:paga|pagan|pagaba|pagaban|abona|abonan|pays?|paid)\b[^.;:]{{0,40}}?,\s*(?:sino\s+|but\s+)?"
                        rf"(?P<now>(?:ahora|now)\s+(?:(?:nos\s+)?(?:paga|pagan|pays?(?:\s+us)?)\s+)?)"
                        rf"(?:a|en|at|in|within)\s+{_NUM}\s*(?:dias|days)\b")
_UNITS = {"dias": 1, "days": 1, "semana": 7, "semanas": 7, "week": 7, "weeks": 7, "mes": 30, "meses": 30,
          "month": 30, "months": 30}
_DELAY_TERMS = re.compile(r"\b(?:tarda|tardan|suele tardar|suelen tardar|takes?)\s+(?:como\s+|unos\s+|unas\s+|about\s+|"
                          r"around\s+)?(?P<n>\d{1,3}|un|una|dos|tres|cuatro|seis|one|two|three|four|six|a)\s+"
                          r"(?P<u>dias|semanas|semana|meses|mes|days|weeks|week|months|month)\s+"
                          r"(?:en pagar|(?:to|in) pay)")
_MONTH_END = re.compile(r"\b(?:paga|pagan|nos paga|pays?)\s+(?:siempre\s+)?(?:a|al|at the|at)\s+"
                        r"(?:fin de mes|final de mes|end of (?:the )?month)\b")
# A day of the month: "paga el 10 del mes siguiente a la factura", "pay on the 25th of every month".
_MONTH_DAY = re.compile(r"\b(?:paga|pagan|nos paga|pays?)\s+(?:siempre\s+|always\s+)?(?P<v>(?:el(?:\s+dia)?|on the)\s+"
                        r"\d{1,2}(?:st|nd|rd|th)?\s+(?:del mes siguiente|del mes que viene|de cada mes|"
                        r"of (?:the following|the next|every|each) month))\b")
_CASH = re.compile(r"\b(?:paga|pagan|nos paga|pays?)\s+(?:siempre\s+)?(?P<v>al contado|por adelantado|por anticipado|a la entrega|contra reembolso|upfront|in advance|cash on delivery|on delivery)")
# A line of a list labelled with whom it is about ("- Restaurante Lua: al contado, cuando se entrega", "- Catering
# Olmo: a 30 pero siempre se retrasan"): the term after the colon.
_LABELLED = re.compile(r"^[^:,.]{3,50}:\s*(?:(?:pagan?|nos pagan?)\s+)?(?:a\s+(?P<n>\d{1,3})(?:\s*dias)?(?=\s*$|[\s,])|"
                       r"(?P<v>al contado|a la entrega|contra reembolso|por adelantado)\b)")
_CASH_VALUES = {"upfront": "por adelantado", "in advance": "por adelantado", "por anticipado": "por adelantado",
                "cash on delivery": "contra reembolso", "contra reembolso": "contra reembolso", "on delivery": "a la entrega"}


# A term said as a discount's condition ("3% off if we pay within 10 days", "un 2% si pagamos a 10 días"): the
# discount's, not the contact's payment term.
_IF_BEFORE = re.compile(r"\b(?:if|si|when|cuando|provided)\s+(?:\w+\s+){0,2}$")
# No more selling on credit ("a Talleres Ruiz no le vendas más a crédito", "a Bodegas Ortiz no les fiemos", "Harbor
# Foods is cash only now"): the customer pays on the spot from now on.
_NO_CREDIT = re.compile(r"\bno\s+(?:le|les)\s+(?:(?:vendas|vendamos|vendemos|sirvas|sirvamos|des|demos)\s+"
                        r"(?:nada\s+)?(?:mas\s+)?(?:a credito|fiado)|fies|fiemos)\b|"
                        r"\bcash only\b")


def _rule_payment_terms(s: Sentence) -> Iterator[Found]:
    m = _NO_CREDIT.search(s.low)
    if m:  # said as an order ("no le vendas más a crédito"), it is a standing one
        yield Found("plazo_pago", "al contado", "contact", m.start(), imperative=True)
        return
    for found in _payment_terms(s):
        if not _IF_BEFORE.search(s.low[:found.at]):
            yield found


def _payment_terms(s: Sentence) -> Iterator[Found]:
    # The term a correction names, first: "ya no nos paga a 30, ahora a 45 días" (the 30 is the old term).
    m = _NOW_TERMS.search(s.low)
    if m and (value := _days(m.group("n"))) and not s.negated(m.start("now")):
        yield Found("plazo_pago", value, "contact", m.start())
        return
    for regex in _PAYMENT_TERMS:
        for m in regex.finditer(s.low):
            value = _days(m.group("n"))
            if value and not s.negated(m.start()):
                yield Found("plazo_pago", value, "contact", m.start())
                return
    m = _BARE_TERMS.search(s.low)
    if m and not s.negated(m.start()) and 7 <= int(m.group("n")) <= 180:
        yield Found("plazo_pago", f"{int(m.group('n'))} días", "contact", m.start())
        return
    m = _IS_TERM.search(s.low)
    if m and not s.negated(m.start()) and 7 <= int(m.group("n")) <= 180 and s.text[m.start("who")].isupper():
        yield Found("plazo_pago", f"{int(m.group('n'))} días", "contact", m.start())
        return
    m = _FLOOR_TERMS.search(s.low)
    if m and _days(m.group("n")):
        yield Found("plazo_pago", _days(m.group("n")), "contact", m.start())
        return
    m = _DELAY_TERMS.search(s.low)
    if m and not s.negated(m.start()):
        n = COUNTS.get(m.group("n")) or int(m.group("n"))
        if 1 <= n * _UNITS[m.group("u")] <= 365:
            yield Found("plazo_pago", f"{n * _UNITS[m.group('u')]} días", "contact", m.start())
            return
    m = _MONTH_END.search(s.low)
    if m and not s.negated(m.start()):
        yield Found("plazo_pago", "fin de mes", "contact", m.start())
        return
    m = _MONTH_DAY.search(s.low)
    if m and not s.negated(m.start()):
        yield Found("plazo_pago", re.sub(r"^on ", "", s.text[m.start("v"): m.end("v")]), "contact", m.start())
        return
    m = _CASH.search(s.low) or _LABELLED.match(s.low)
    if m and m.group("v") and not s.negated(m.start()):
        yield Found("plazo_pago", _CASH_VALUES.get(m.group("v"), m.group("v")), "contact", m.start())
    elif m and m.group("n") and 7 <= int(m.group("n")) <= 180:
        yield Found("plazo_pago", f"{int(m.group('n'))} días", "contact", m.start())


# A customer moving to another way of paying ("Bloom & Co want to move to direct debit from now on", "Talleres Ruiz se
# pasa a la transferencia"): its method from now on.
_MOVES_TO = re.compile(r"(?:\b(?:(?:want|wants|are going|is going|have|has|'ve)\s+(?:to\s+)?|will\s+|are\s+|is\s+)?"
                       r"(?:move|moved|moving|switch|switched|switching|change|changed|changing|go|going)\s+(?:over\s+)?"
                       r"to\s+(?:paying\s+(?:by|with)\s+)?|\bse\s+(?:pasan?|han pasado|ha pasado|van a pasar|va a pasar)\s+a\s+"
                       r"(?:pagar\s+(?:por|con)\s+)?(?:la\s+|el\s+)?|\b(?:quieren?|van? a)\s+pasarse\s+a\s+(?:la\s+|el\s+)?)"
                       r"(?P<v>" + _METHODS + r")\b")


def _rule_payment_method(s: Sentence) -> Iterator[Found]:
    m = _PAY_METHOD.search(s.low) or _MOVES_TO.search(s.low)
    if m and not s.negated(m.start()):
        yield Found("forma_pago", _PAY_METHODS[m.group("v")], "contact", m.start())


_ROLES = (r"comercial|gerente|administrador|administradora|encargado|encargada|jefe|jefa|director|directora|"
          r"responsable|rep|sales rep|manager|account manager|contable|accountant|owner|dueno|duena|propietario|"
          r"propietaria|boss")
# "es un tal Mikel", "is a guy called Mikel": the name follows.
_SOMEONE_CALLED = r"(?:una?\s+tal\s+|(?:a|some)\s+(?:guy|bloke|chap|lady|woman)\s+called\s+)?"
_CONTACT_PERSON = [re.compile(p.replace("(?P<val>)", _SOMEONE_CALLED + "(?P<val>)")) for p in (
    r"\b(?:persona de\s+)?contacto?\s+(?:principal\s+|nuevo\s+|nueva\s+)?(?:en|de|con|para)\s+(?P<who>.+?)\s+(?:es|sera|ahora es|pasa a ser|es ahora)\s+(?P<val>)",
    r"\b(?:persona de\s+)?contacto(?:\s+principal)?(?:\s+(?:alli|ahi|there))?\s+(?:es|sera|ahora es|pasa a ser|is)\s+(?P<val>)",
    r"\bcontacto\s*:?\s+(?P<val>)",  # "Acme: contacto Laura"
    r"\b(?:persona|el|la)\s+con\s+(?:la que|el que|quien)\s+(?:hablo|hablamos|trato|tratamos)\s+(?:(?:en|de)\s+(?P<who>.+?)|alli|ahi)\s+es\s+(?P<val>)",
    r"\ben\s+(?P<who>.+?)\s+(?:(?:ahora|ya)\s+)?(?:hay que hablar con|tenemos que hablar con|hablamos con|hablo con|nos atiende|me atiende|preguntar por|pregunta por|lo lleva|nos lleva|me lleva|nos lleva la cuenta|la que manda es|el que manda es)\s+(?:(?:ahora|ya)\s+)?(?P<val>)",
    r"\b(?:quien|la que|el que)\s+(?:lleva|gestiona|se encarga de|firma|hace|tramita)\s+(?:(?:ahora|ya)\s+)?(?:las facturas|la facturacion|la contabilidad|las cuentas|los pagos|los cobros|las compras|los pedidos|pagar|cobrar|facturar)(?:\s+(?:en|de)\s+(?P<who>.+?)|\s+(?:alli|ahi))?\s+(?:ahora\s+)?es\s+(?P<val>)",
    # "Ahora lleva las compras su sobrino, Álex", "now Tom does the ordering there": who took over a customer's
    # buying or paying, told after the business was named
    r"\b(?:ahora|ya)\s+(?:lleva|gestiona|hace|tramita|se encarga de)\s+(?:las compras|los pedidos|los pagos)"
    r"(?:\s+(?:alli|ahi|en\s+(?P<who>.+?)))?\s+(?:(?:su|el|la)\s+(?:nuev[oa]\s+)?(?:sobrin[oa]|hij[oa]|herman[oa]|"
    r"mujer|marido|yerno|nuera|prim[oa]|soci[oa]|encargad[oa]|compañer[oa]|companer[oa])\s*,?\s+)?(?P<val>)",
    r"\bnow\s+(?:(?:their|his|her)\s+(?:nephew|niece|son|daughter|brother|sister|wife|husband|partner|manager)\s*,?\s+)?"
    r"(?P<val>)[a-z]+\s+(?:does|handles|runs)\s+(?:the|their)\s+(?:ordering|orders|buying|purchasing|payments)\b",
    r"\bcontact(?: person)?\s+(?:at|in|for|with)\s+(?P<who>.+?)\s+is\s+(?:now\s+)?(?P<val>)",
    r"\b(?:their|its)\s+(?:new\s+)?contact(?: person)?\s+(?:is|will be)\s+(?:now\s+)?(?P<val>)",
    r"(?P<who>\S+(?:\s+\S+){0,3}?)'s\s+(?:new\s+)?(?:contact(?: person)?|" + _ROLES + r")\s+is\s+(?:now\s+)?(?P<val>)",
    # "el de Hierros del Norte se llama ahora Luis", "the guy at Patel Wholesale is called Sunil"
    r"^(?:el|la)\s+(?:nuev[oa]\s+)?de\s+(?P<who>.+?)\s+se\s+llama\s+(?:ahora\s+)?(?P<val>)",
    r"^(?:the|our)\s+(?:new\s+)?(?:guy|man|woman|lady|girl|person|chap|bloke|fella)\s+(?:at|in|from)\s+"
    r"(?P<who>(?!(?:the|a|an|my|our|this|that)\b).+?)\s+"
    r"(?:is|'s)\s+(?:now\s+)?(?:called|named)\s+(?:now\s+)?(?P<val>)",
    # "The new guy at Nordwind, Kai, ...": the person named right after
    r"\b(?:the|el|la)\s+(?:new\s+|nuev[oa]\s+)?(?:guy|man|woman|lady|girl|person|chap|bloke|chico|chica|senor|senora|"
    r"tio|tia|" + _ROLES + r")\s+(?:at|in|from|de|en)\s+(?P<who>(?:(?!\b(?:is|es|se|are|was|called|llama)\b)[^,]){1,40}?),\s+(?P<val>)",
    r"\b(?:at|in)\s+(?P<who>.+?),?\s+(?:we|i)\s+(?:deal|talk|speak)\s+(?:with|to)\s+(?P<val>)",
    # "Sunil has left Patel Wholesale, we deal with Priya now": the business named before
    r"\b(?:we|i)\s+(?:now\s+)?(?:deal|talk|speak)\s+(?:with|to)\s+(?P<val>)\S+\s+(?:now|from now on|instead)\b",
    # "At Riverside Deli ask for Tom when you deliver"
    r"\b(?:at|in)\s+(?P<who>.+?),?\s+(?:(?:always|just|you(?:'ll)? (?:need|have) to|we (?:need|have) to)\s+)?"
    r"(?:ask for|talk to|speak to|speak with|talk with)\s+(?P<val>)",
    # "the guy at Patel Wholesale who does the ordering is called Sunil", "la chica de Flores Ana que lleva los
    # pedidos se llama Rocío"
    r"\b(?:the|el|la)\s+(?:guy|man|woman|lady|girl|person|chap|bloke|one|chico|chica|senor|senora|tio|tia|persona)\s+"
    r"(?:at|in|from|de|en)\s+(?P<who>.+?)\s+(?:who|that|que)\s+[^,.;]{3,60}?\s+"
    r"(?:is called|'s called|is named|se llama)\s+(?P<val>)",
    # "nuestro comercial en Acme es Javi", "the account manager at Acme is Tom"
    rf"\b(?:el|la|nuestro|nuestra|our|the)\s+(?:nuevo\s+|nueva\s+|new\s+)?(?:{_ROLES})\s+(?:de|del|en|at|of|from)\s+"
    r"(?P<who>.+?)\s+(?:es|is)\s+(?:ahora\s+|now\s+)?(?P<val>)",
    # "Clínica Dental Sonrisas, la administradora es Marta Gil": the role alone, after the business it is at
    rf"(?:^|,\s*|\by\s+)(?:el|la)\s+(?:{_ROLES})\s+(?:es|is)\s+(?:ahora\s+)?(?P<val>)",
    # "Gemma has left, the new accounts person is Callum Forde", "la nueva persona de contacto es Rocío": the business
    # named before
    r"\b(?:the\s+|their\s+|our\s+)?new\s+(?:(?:accounts?|sales|purchasing|billing|invoicing|orders?|main)\s+)?"
    r"(?:person|contact|contact person|manager|rep)\s+(?:there\s+)?(?:is|'s|will be)\s+(?:now\s+)?(?P<val>)",
    r"\b(?:el|la|su)\s+(?:persona de contacto|contacto|persona|encargad[oa]|comercial|responsable)\s+nuev[oa]\s+"
    r"(?:es|sera)\s+(?P<val>)",
    r"\b(?:el|la|su)\s+nuev[oa]\s+(?:persona de contacto|contacto|persona|encargad[oa]|comercial|responsable)"
    r"(?:\s+de\s+(?:cuentas|administracion|compras|facturacion|pedidos))?\s+(?:alli\s+|ahi\s+)?(?:es|sera)\s+(?P<val>)",
    # "Lola ya no está, ahora nos atiende Andrés", "now we deal with Priya": of the business named or talked of
    r"\b(?:ahora|now)\s+(?:nos atiende|me atiende|nos lleva|hablamos con|tratamos con|we deal with|we talk to|"
    r"we speak to)\s+(?P<val>)",
    # "Acme tiene nueva gerente, Pilar Ruiz"
    rf"^(?P<who>.+?)\s+(?:tiene|tienen|has|have|has got|have got|'ve got)\s+(?:un\s+|una\s+|a\s+)?(?:nuevo|nueva|new)\s+"
    rf"(?:{_ROLES}|contacto|contact)\s*,?\s*"
    r"(?:que se llama\s+|llamad[oa]\s+|called\s+|named\s+)?(?P<val>)",
)]
_CONTACT_PERSON_BEFORE = [re.compile(p) for p in (
    r"\s+es\s+(?:el|la|nuestro|nuestra|mi)\s+(?:persona de\s+)?contacto\s+(?:en|de|con)\s+(?P<who>.+)$",
    r"\s+is\s+(?:our|my|the)\s+contact(?: person)?\s+(?:at|in|for)\s+(?P<who>.+)$",
)]


# A name right after "se llama" / "is called" is one even typed in lower case ("se llama ahora luis").
_CALLED = re.compile(r"\b(?:se llama|called|named)\s+(?:ahora\s+|now\s+)?$")


def _rule_contact_person(s: Sentence) -> Iterator[Found]:
    for regex in _CONTACT_PERSON:
        m = regex.search(s.low)
        if m and not s.negated(m.start()):
            name = name_at(s, m.start("val"), strong=bool(_CALLED.search(s.low[:m.start("val")])))
            if name:
                who = (m.start("who"), m.end("who")) if m.groupdict().get("who") else None
                yield Found("persona_contacto", name, "contact", m.start(), who)
                return
    for regex in _CONTACT_PERSON_BEFORE:
        m = regex.search(s.low)
        if m:
            run = re.search(r"([A-ZÁÉÍÓÚÑ][\w'\-]*(?:\s+[A-ZÁÉÍÓÚÑ][\w'\-]*){0,2})$", s.text[: m.start()])
            if run and fold(run.group(1)) not in NAME_STOP:
                yield Found("persona_contacto", run.group(1), "contact", m.start(), (m.start("who"), m.end("who")))
                return


_CHANNELS = [(r"correo postal|correo ordinario|carta certificada|burofax|post(?!-)", "correo postal"),
             (r"correo electronico|e-?mail|correo|mail", "email"),
             (r"whats ?app|wasap|wasa|wsp", "WhatsApp"),
             (r"telefono|llamada|phone|telephone", "teléfono"),
             (r"sms|text message", "SMS"),
             (r"portal(?: de proveedores)?|supplier portal", "portal")]
_FORMATS = [(r"pdf", "PDF"), (r"factura electronica|facturae|e-?factura|electronic invoices?|e-?invoices?",
                              "factura electrónica"),
            (r"papel|paper", "papel"), (r"excel|xlsx", "Excel"), (r"xml", "XML")]
_MEDIUM = re.compile(r"\b(?:por|en|via|mediante|a traves de|by|through|as|in|on|over)\s+"
                     r"(?:el\s+|la\s+|su\s+|sus\s+|formato\s+|the\s+|a\s+|an\s+|their\s+|its\s+)?(?P<x>"
                     + "|".join(p for table in (_CHANNELS, _FORMATS) for p, _ in table) + r")\b")
_PREFER_THIRD = re.compile(
    r"\b(?:prefiere|prefieren|quiere|quieren|pide|piden|exige|exigen|necesita|necesitan|solo acepta|solo aceptan|"
    r"acepta|aceptan|le gusta|les gusta|recibe|reciben|van siempre|van|se (?:le |les )?(?:mandan|envian)|"
    r"hay que (?:mandar|enviar)(?:le|les|selas|selo)?|(?:mandale|enviale|mandales|enviales|manda|envia)\s+siempre|"
    r"(?<!i )(?<!we )(?:prefers?|wants?|likes?|needs?|requires?|only accepts?|accepts?|asks? for|goes|go)|"
    r"always (?:send|email))\b")
_PREFER_FIRST = re.compile(r"\b(?:prefiero|preferimos|quiero|queremos|me gusta|nos gusta|me va mejor|"
                           r"i prefer|we prefer|i want|we want|i like|i'd rather|i would rather)\b")


def _medium(word: str) -> tuple[str, str]:
    for table, attribute in ((_CHANNELS, "canal_preferido"), (_FORMATS, "formato_factura")):
        for pattern, value in table:
            if re.fullmatch(pattern, word):
                return attribute, value
    raise ValueError(word)


_DURABLE_SEND = re.compile(r"\b(?:mandale|enviale|mandales|enviales|manda|envia|send|email|facturas|invoices)\b")
_DIRECT_MEDIUM = re.compile(r"\s+(?:el\s+|la\s+|the\s+)?(?P<x>"
                            + "|".join(p for table in (_CHANNELS, _FORMATS) for p, _ in table) + r")\b")
# "quiero la factura en PDF" asks for one document; "quiero las facturas en PDF" is a preference.
_ONE_DOCUMENT = re.compile(r"\s+(?:la|esta|esa|el|este|ese|the|this|that)\s+(?:factura|presupuesto|resumen|informe|"
                           r"invoice|quote|summary|report)\b(?!\s+electronica)")
_FORMAT_ADJECTIVE = re.compile(r"\b(?P<x>paper|pdf|xml|excel|electronic)\s+(?:invoices?|bills?|copies|copy)\b")


def _rule_channel_format(s: Sentence) -> Iterator[Found]:
    durable = bool(DURABLE.search(s.low))
    cues = [(_PREFER_THIRD, "contact"), (_PREFER_FIRST, "self_or_contact")]
    if durable:  # "a Acme mándale las facturas en PDF siempre"
        cues.append((_DURABLE_SEND, "contact"))
    for regex, target in cues:
        for cue in regex.finditer(s.low):
            if s.negated(cue.start()) or (not durable and _ONE_DOCUMENT.match(s.low, cue.end())):
                continue
            seen = set()
            window = (cue.end(), min(len(s.low), cue.end() + 90))
            direct = _DIRECT_MEDIUM.match(s.low, cue.end())  # "I prefer WhatsApp", "prefiere papel"
            for m in [*([direct] if direct else []), *_FORMAT_ADJECTIVE.finditer(s.low, *window),
                      *_MEDIUM.finditer(s.low, *window)]:
                word = m.group("x")
                attribute, value = _medium("factura electronica" if word == "electronic" else word)
                if attribute not in seen:
                    seen.add(attribute)
                    yield Found(attribute, value, target, cue.start())
            if seen:
                return


_AMOUNTS = re.compile(
    r"\b(?:quiero|prefiero|dame|muestrame|ensename|pon|ponme|pasame|mandame|enviame|dime|send me|give me|show me|"
    r"tell me|i want|i prefer|i'd like)?\s*(?:siempre\s+|always\s+)?(?:los\s+|las\s+|the\s+)?(?:totales|importes|"
    r"precios|cantidades|cifras|totals|amounts|prices|figures)\s+(?:siempre\s+|always\s+)?(?P<v>con|sin|with|without|"
    r"including|excluding|incl|excl)\.?\s+(?:el\s+)?(?:iva|vat|tax|impuestos)\b")


def _rule_amounts(s: Sentence) -> Iterator[Found]:
    m = _AMOUNTS.search(s.low)
    if m and not s.negated(m.start()):
        value = "con IVA" if m.group("v") in ("con", "with", "including", "incl") else "sin IVA"
        yield Found("formato_importes", value, "self", m.start(), imperative=True)


_OPT_REGIME = r"(?:regimen\s+(?:especial\s+)?(?:de(?:l)?\s+)?)?"
_VAT_REGIMES = [(_OPT_REGIME + r"(?:recargo de equivalencia|equivalence surcharge)", "recargo de equivalencia"),
                (_OPT_REGIME + r"(?:criterio de caja|cash accounting)", "criterio de caja"),
                (r"regimen general|general (?:vat )?(?:regime|scheme)", "general"),
                (r"regimen simplificado|simplified (?:vat )?(?:regime|scheme)", "simplificado"),
                (_OPT_REGIME + r"(?:rebu|bienes usados)", "REBU"),
                (_OPT_REGIME + r"(?:agricultura(?:, ganaderia y pesca)?|reagyp)", "agricultura, ganadería y pesca")]
_IRPF_REGIMES = [(_OPT_REGIME + r"(?:modulos|estimacion objetiva)", "estimación objetiva"),
                 (_OPT_REGIME + r"estimacion directa simplificada", "estimación directa simplificada"),
                 (_OPT_REGIME + r"estimacion directa normal", "estimación directa normal")]
_REGIME_CUE = re.compile(r"\b(?:estamos|estoy|tributamos|tributo|vamos|voy|trabajamos|trabajo|facturamos|"
                         r"facturo|nuestro regimen(?: de iva)? es|mi regimen(?: de iva)? es|we are|we're|i am|"
                         r"i'm|our (?:vat )?(?:scheme|regime) is|(?:tenemos|tengo|llevamos|llevo) el iva)\s+"
                         r"(?:acogid[oa]s?\s+(?:al|a)|en|por|in|under|on)?\s*(?:el\s+|the\s+)?")


def _rule_regime(s: Sentence) -> Iterator[Found]:
    for cue in _REGIME_CUE.finditer(s.low):
        rest = s.low[cue.end(): cue.end() + 60]
        for table, attribute in ((_VAT_REGIMES, "regimen_iva"), (_IRPF_REGIMES, "regimen_irpf")):
            for pattern, value in table:
                if re.match(pattern, rest) and not s.negated(cue.start()):
                    yield Found(attribute, value, "org", cue.start())
                    return


_ADDRESS = [re.compile(p) for p in (
    r"\b(?P<who>nuestra|mi|la|our|my|the)\s+(?:nueva\s+|new\s+)?(?:direccion|domicilio|sede|oficina|address|office address)(?:\s+fiscal|\s+social)?(?:\s+(?:de|of)\s+(?P<of>.+?))?\s+(?:es ahora|ahora es|esta en|sera|es|is now|is)\s*:?\s+(?P<val>)",
    r"\b(?P<who>nos hemos mudado|nos mudamos|nos trasladamos|we(?:'ve| have)? moved)\s+(?:a|to)\s+(?P<val>)",
    r"(?P<of>\S+(?:\s+\S+){0,3}?)(?:'s|(?<=s)')\s+(?:new\s+)?address\s+is\s+(?P<val>)",  # "Hilltop Farms' address"
    # "ahora estamos en Calle Colón 12", "we're now at 12 Park Road": only when a street follows.
    r"\b(?P<who>estamos|we're|we are)\s+(?:ahora\s+|now\s+)?(?:en|at)\s+(?P<val>)(?=(?:la\s+)?(?:calle|c/|avda|"
    r"avenida|plaza|paseo|camino|carretera|poligono)\b|\d+[a-z]?\s+(?:\w+\s+){1,3}(?:street|road|avenue|lane)\b)",
    # "Printwise is at 3 Low Road", "hilltop farms moved to 22 station road", "Vega se ha mudado a la calle Luna 3",
    # "Vega está ahora en la avenida...": a business placed at a street, moving or not.
    r"^(?!(?:i|we|you|he|she|it|they|the|a|an|my|our|your|his|her|their|this|that|yo|el|la|los|las|un|una|mi|tu|"
    r"su|nuestro|nuestra|este|esta|ese|esa)\b)(?P<of>\S+(?:\s+\S+){0,3}?)\s+(?:is|are|'s|esta|estan|se ha mudado|se han mudado|se ha trasladado|"
    r"se han trasladado|(?:has |have )?moved)\s+(?:now\s+|ahora\s+)?(?:(?:located|based)\s+)?(?:en|at|a|to)\s+"
    r"(?P<val>)(?=(?:la\s+|el\s+)?(?:calle|c/|avda|avenida|plaza|paseo|camino|carretera|poligono)\b[^,.;]{0,40}?\d|"
    r"\d+[a-z]?\s+(?:\w+\s+){1,3}(?:street|road|avenue|lane)\b)",
)]
_OWN_COMPANY = re.compile(r"(?:la|mi|nuestra|the|my|our)\s+(?:empresa|sociedad|negocio|company|business)")


def _rule_address(s: Sentence) -> Iterator[Found]:
    for regex in _ADDRESS:
        m = regex.search(s.low)
        if not m or s.negated(m.start()):
            continue
        value = clean_value(s.text[m.start("val"):])
        # An address has a number or a street word; "nuestra oficina es pequeña" is not one.
        if not (5 <= len(value) <= 160 and re.search(r"\d|\b(?:calle|c/|avda|avenida|plaza|paseo|camino|"
                                                     r"carretera|street|road|avenue)\b", fold(value))):
            continue
        of = m.groupdict().get("of")
        # "nuestra dirección", "nos hemos mudado", "la dirección de la empresa": ours; "la dirección de Acme": theirs.
        own = bool(_OWN_COMPANY.fullmatch(of)) if of else m.groupdict().get("who") not in ("la", "the")
        who = (m.start("of"), m.end("of")) if of else None
        yield Found("direccion", value, "org" if own else "contact", m.start(), None if own else who)
        return


_NIF = re.compile(r"\b(?P<who>nuestro|mi|el|our|my|the)\s+(?:nuevo\s+)?(?:nif|cif|nif-iva|numero de iva|vat(?: number)?|"
                  r"vat id|tax id|tax number)(?:\s+(?:de|of)\s+(?P<of>.+?))?\s+(?:(?:es|is)(?:\s+now|\s+ahora)?|"
                  # "our VAT number changed when we incorporated, it's now GB 284 1937 56"
                  r"(?:changed|has changed|ha cambiado)\b[^.;:]{0,50}?\b(?:it's|it is|ahora es|es ahora)(?:\s+now)?)"
                  r"\s*:?\s+")


def _rule_tax_id(s: Sentence) -> Iterator[Found]:
    m = _NIF.search(s.low)
    if not m:
        return
    # (a British VAT number is written in groups: "GB 284 1937 56")
    val = re.match(r"[A-Z]{1,2}\s?\d[\d .\-]{5,14}\d(?!\w)|[A-Z0-9][A-Z0-9.\-]{6,14}[A-Z0-9]\b", s.text[m.end():].upper())
    if not val:
        return
    value = re.sub(r"[^A-Z0-9]", "", val.group())
    if not (8 <= len(value) <= 12 and sum(ch.isdigit() for ch in value) >= 7):
        return
    own = m.group("who") in ("nuestro", "mi", "our", "my") or bool(m.group("of") and _OWN_COMPANY.fullmatch(m.group("of")))
    who = (m.start("of"), m.end("of")) if m.group("of") else None
    yield Found("nif", value, "org" if own else "contact", m.start(), None if own else who)


_COMPANY_NAME = re.compile(r"\b(?:nuestra empresa|mi empresa|la empresa|our company|my company)\s+(?:se llama|is called|is named)\s+|"
                           # the name the business's own invoices carry: "the company name on invoices should be ..."
                           r"\b(?:the|our)\s+(?:company|business|legal)\s+name\s+(?:on\s+(?:the\s+|our\s+)?invoices\s+)?"
                           r"(?:should be|must be|is now|is)\s+(?:now\s+)?|\bel nombre (?:de la empresa|fiscal)\s+"
                           r"(?:en las facturas\s+)?(?:es|tiene que ser|debe ser|ahora es)\s+")
_ACTIVITY = re.compile(r"\b(?:nos dedicamos a|me dedico a|we specialise in|we specialize in)\s+(?P<val>)")
# A company's legal name as written: capitalised words, then its form ("Pan Molina S.L.", "Hoteles del Sol SA",
# "Okafor Trading Ltd").
_LEGAL_NAME = re.compile(r"([A-ZÁÉÍÓÚÑ0-9][\w&'.\-]*(?:\s+(?:de\s+|del\s+|y\s+|e\s+|&\s+)?[A-ZÁÉÍÓÚÑ0-9][\w&'.\-]*)*"
                         r"(?:,?\s+(?:S\.?\s?[LA]\.?(?:U\.?)?|Ltd\.?|Limited|LLC|Inc\.?|plc))?)")
# The name a customer's invoices are made out to: "para Panadería Molina las facturas van a nombre de Pan Molina
# S.L.", "a Hotel Sol hay que facturarle a nombre de Hoteles del Sol SA", "invoices for Riverside Deli are made out
# to Riverside Foods Ltd". (The invoice itself, "invoice Talleres García", is an order, not this.)
_MADE_OUT = (r"(?:van|va|tienen que ir|tiene que ir|deben ir|se hacen|se hace|salen|hay que hacerlas|hay que hacerla)\s+"
             r"(?:siempre\s+|ahora\s+)?a nombre de")
_MADE_OUT_EN = (r"(?:go|goes|are made out|is made out|should be made out|must be made out|are addressed|should be "
                r"addressed|should go|must go|need to go|need to be made out)\s+(?:now\s+)?to")
_BILLED_AS = [re.compile(p) for p in (
    rf"\b(?:las\s+|la\s+)?facturas?\s+(?:de|para|a)\s+(?P<who>.+?)\s+{_MADE_OUT}\s+",
    rf"\b(?:para|con|a)\s+(?P<who>.+?),?\s+(?:las\s+|la\s+)?facturas?\s+{_MADE_OUT}\s+",
    r"\ba\s+(?P<who>.+?),?\s+(?:hay que|tenemos que)\s+facturar(?:le|les)?\s+(?:siempre\s+)?a nombre de\s+",
    rf"\b(?:the\s+)?(?:invoices?|bills?)\s+(?:for|to)\s+(?P<who>.+?)\s+{_MADE_OUT_EN}\s+",
    rf"\bfor\s+(?P<who>.+?),?\s+(?:the\s+)?(?:invoices?|bills?)\s+{_MADE_OUT_EN}\s+",
    r"\b(?:invoice|bill)\s+(?P<who>.+?)\s+(?:as|under the name(?: of)?|in the name of)\s+",
)]


def _rule_company(s: Sentence) -> Iterator[Found]:
    m = _COMPANY_NAME.search(s.low)
    if m and not s.negated(m.start()):
        run = _LEGAL_NAME.match(s.text[m.end():])
        if run:
            yield Found("razon_social", run.group(1).strip(" ,"), "org", m.start())
    for regex in _BILLED_AS:
        m = regex.search(s.low)
        if m and not s.negated(m.start()):
            run = _LEGAL_NAME.match(s.text[m.end():])
            if run and fold(run.group(1)) not in NAME_STOP:
                name = run.group(1).strip(" ,")
                # "Invoices for Greenway Vets go to Sandra": the person they go to, not the name they are made out to
                sent = re.search(r"\bgo(?:es)? to\s*$", s.low[: m.end()]) and not looks_like_company(name)
                yield Found("persona_contacto" if sent else "razon_social", name, "contact", m.start(),
                            (m.start("who"), m.end("who")))
                break
    m = _ACTIVITY.search(s.low)
    if m and not s.negated(m.start()):
        value = clean_value(s.text[m.start("val"):])
        if 3 <= len(value) <= 120:
            yield Found("actividad", value, "org", m.start())


# A business that has closed for good, gone bust or reopened: said of a customer or supplier, its trading status.
# "ha cerrado" alone ends its clause or says for good ("ha cerrado hoy a las 3", "ha cerrado el trato" are no closing).
_CLOSED = re.compile(
    r"\b(?:ha cerrado(?=\s*(?:$|[,.;:!]|y\b|and\b|definitivamente|para siempre|del todo|el negocio|la empresa|"
    r"la tienda|el taller|el bar|sus puertas))|ha echado el cierre|ha (?P<q>quebrado)|(?:ha entrado|esta) en "
    r"(?P<c>concurso)(?: de acreedores)?|esta en (?P<q2>quiebra)|"
    r"(?:has|have|had)\s+(?:closed down|closed for good|gone (?P<b>bust)|gone under|shut down for good|"
    r"(?:ceased|stopped) trading|gone into (?P<a>administration|liquidation|receivership))|"
    r"went (?:(?P<b2>bust)|under|into (?P<a2>administration|liquidation|receivership))|closed down|"
    r"(?:is|are) (?:now )?in (?P<a3>administration|liquidation|receivership)|(?:is|are) no longer trading)\b")
_REOPENED = re.compile(r"\b(?:ha reabierto|ha vuelto a abrir|vuelve a abrir|(?P<en>has reopened|have reopened|"
                       r"reopened|(?:is|are) (?:open|trading) again))\b")


# Bought by another business: "Grupo Lanza ha comprado Distribuciones Vera" (never "le ha comprado a...", bought from),
# "Northgate Supplies has been taken over by Carter Group", "Peak Office Supplies is now part of Staples". The
# bought one's status names its new owner.
_BUYS = re.compile(r"\b(?:ha comprado|compro|ha absorbido|absorbio|(?P<en>has bought|bought|has taken over|took over|"
                   r"has acquired|acquired))\s+(?!(?:a|al|from|off)\b)")
_BOUGHT_BY = re.compile(r"\b(?:(?:ha sido|fue) (?:comprad[oa]|absorbid[oa]) por|(?:ahora )?(?P<part>(?:es|forma) parte "
                        r"de)|(?P<en>(?:has been|was) (?:taken over|bought(?: out)?|acquired) by|"
                        r"(?:is|are) now (?P<part_en>part of|owned by)))\s+")


def _taken_over(s: Sentence) -> Found | None:
    m = _BUYS.search(s.low)
    if m and not s.negated(m.start()):
        buyer, bought = _name_before(s, len(s.text[: m.start()].rstrip())), name_at(s, m.end(), strong=False)
        if buyer and bought and looks_like_company(bought):
            at = s.text.find(bought, m.end())
            value = f"taken over by {buyer}" if m.group("en") else f"comprada por {buyer}"
            return Found("situacion", value, "contact", m.start(), (at, at + len(bought)))
    m = _BOUGHT_BY.search(s.low)
    if m and not s.negated(m.start()):
        end = len(s.text[: m.start()].rstrip())
        bought, owner = _name_before(s, end), name_at(s, m.end(), strong=False)
        if bought and owner:
            english = m.group("en")
            value = (("part of" if m.group("part_en") else "taken over by") if english else
                     "parte de" if m.group("part") else "comprada por")
            return Found("situacion", f"{value} {owner}", "contact", m.start(), (end - len(bought), end))
    return None


def _rule_trading_status(s: Sentence) -> Iterator[Found]:
    owned = _taken_over(s)
    if owned is not None:
        yield owned
        return
    m = _CLOSED.search(s.low)
    if m and not s.negated(m.start()):
        administration = m.group("a") or m.group("a2") or m.group("a3")
        value = (f"in {administration}" if administration else "gone bust" if m.group("b") or m.group("b2") else
                 "closed down" if m.group().startswith(("has", "have", "had", "went", "closed", "is", "are")) else
                 "en concurso de acreedores" if m.group("c") else "en quiebra" if m.group("q") or m.group("q2") else
                 "cerrado")
        yield Found("situacion", value, "contact", m.start())
        return
    m = _REOPENED.search(s.low)
    if m and not s.negated(m.start()):
        yield Found("situacion", "reopened" if m.group("en") else "reabierto", "contact", m.start())


_RETENTION = re.compile(r"\b(?:aplico|aplicamos|facturo con|facturamos con|llevo|llevamos|tengo|tenemos|"
                        r"mi|nuestra|i apply|we apply|my|our)\s+(?:una\s+|un\s+|la\s+|the\s+|a\s+)?(?:retencion|irpf|"
                        r"withholding)(?:\s+(?:de\s+)?irpf)?\s+(?:es\s+|is\s+)?(?:de(?:l)?\s+|of\s+)?(?P<n>\d{1,2})\s*(?:%|por ciento|percent)")


def _rule_retention(s: Sentence) -> Iterator[Found]:
    m = _RETENTION.search(s.low)
    if m and not s.negated(m.start()) and 1 <= int(m.group("n")) <= 35:
        yield Found("retencion_irpf", f"{int(m.group('n'))}%", "org", m.start())


_DISCOUNT = [re.compile(p) for p in (
    r"\b(?:le|les)\s+(?:hacemos|aplicamos|damos)\s+(?:siempre\s+)?(?:un|el)\s+(?P<n>\d{1,2})\s*(?:%|por ciento)\s+de\s+descuento",
    r"\btiene(?:n)?\s+(?:siempre\s+)?(?:un|el)\s+(?P<n>\d{1,2})\s*(?:%|por ciento)\s+de\s+descuento",
    r"\b(?:gets?|has)\s+(?:a\s+)?(?P<n>\d{1,2})\s*(?:%|percent)\s+discount",
    r"\bdescuento\s+(?:de|para|a)\s+.{1,40}?\s+es\s+(?:de\s+|del\s+)?(?:un\s+)?(?P<n>\d{1,2})\s*(?:%|por ciento)",
    # A percentage a customer or supplier gives us is a discount: "ahora nos hace un 8%", "gives us 8%".
    r"\b(?:nos|me)\s+(?:hace|hacen|da|dan|aplica|aplican)\s+(?:siempre\s+|ahora\s+)?(?:un|el)\s+(?P<n>\d{1,2})\s*"
    r"(?:%|por ciento)",
    r"\bgives?\s+(?:us|me)\s+(?:a\s+|an\s+)?(?P<n>\d{1,2})\s*(?:%|percent)",
    # The discount's new figure: "desde este mes su descuento sube al 12%", "their discount goes up to 8%"
    r"\b(?:su|el|their|the|his|her)\s+(?:trade\s+)?(?:descuento|discount)\s+(?:sube|subira|pasa|pasara|baja|bajara|queda|"
    r"se queda|goes up|went up|rises|drops|goes down|is now|will be|becomes)\s+(?:a\s+ser\s+)?(?:(?:a|al|del|de|to|at)\s+)?"
    r"(?:un\s+)?(?P<n>\d{1,2})\s*(?:%|por ciento|percent)",
    r"\b(?:les|le)\s+(?:hemos|he)\s+(?:subido|bajado|puesto|dejado)\s+el\s+descuento\s+(?:a|al)\s+(?:un\s+)?"
    r"(?P<n>\d{1,2})\s*(?:%|por ciento)",
)]


# A standing delivery day: "Talleres García entrega los martes", "they deliver on Tuesdays" (not "el martes").
_DAYS_ES = {"lunes": "lunes", "martes": "martes", "miercoles": "miércoles", "jueves": "jueves", "viernes": "viernes",
            "sabado": "sábado", "domingo": "domingo"}
_DAYS_EN = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_DELIVERY_DAY = re.compile(
    rf"\b(?:entrega|entregan|entregamos|reparte|reparten|repartimos|sirve|sirven|servimos|viene|vienen|pasa|pasan|"
    rf"delivers?|deliver|comes?|come)\s+(?:siempre\s+|always\s+|solo\s+|only\s+)?"
    rf"(?:(?P<es>los)|(?P<en>on|every))\s+(?P<d>{WEEKDAY_WORD})(?:\s*(?:,|y|and|e)\s+(?P<d2>{WEEKDAY_WORD}))?\b")


def _day_name(word: str, english: bool) -> str:
    word = word[:-1] if word.endswith("s") and word[:-1] in (*_DAYS_ES, *_DAYS_EN) else word
    return word.capitalize() if english else _DAYS_ES.get(word, word)


def _day_key(word: str) -> str:
    """A weekday's one key in both languages, folded and singular: "fridays", "viernes" -> "viernes"."""
    return list(_DAYS_ES)[WEEKDAYS[word if word in WEEKDAYS else word[:-1]]]


# A change for a while ("este mes reparte los martes por obras", "this week they deliver on Thursdays"): the standing
# day stays, and the sentence is a note beside it.
_FOR_A_WHILE = re.compile(r"\b(?:este mes|esta semana|estas semanas|estos dias|de momento|temporalmente|por obras|"
                          r"mientras duren|this week|this month|for now|for the time being|temporarily|while the works|"
                          r"until the end of the month|hasta (?:fin|final) de mes)\b")


def _rule_delivery_day(s: Sentence) -> Iterator[Found]:
    m = _DELIVERY_DAY.search(s.low)
    if not m or s.negated(m.start()) or _FOR_A_WHILE.search(s.low):
        return
    english = bool(m.group("en"))
    if english and m.group("en") == "on" and not m.group("d").endswith("s"):
        return  # "delivers on Tuesday": one delivery, not a standing day
    days = [_day_name(d, english) for d in (m.group("d"), m.group("d2")) if d]
    yield Found("dia_entrega", (" and " if english else " y ").join(days), "contact_or_org", m.start())


# The day of the month a customer or supplier invoices ("Apex Cleaning invoices us on the 1st of each month", "nos
# pasan el recibo el día 5", "han pasado la facturación al 15"), one at a time: a new day replaces the last.
_BILLS = (r"(?:nos|me)\s+(?:factura|facturan|pasa(?:n)?\s+(?:la factura|las facturas|el recibo|los recibos|el cargo)|"
          r"gira(?:n)?\s+(?:el recibo|los recibos)|carga(?:n)?\s+(?:el recibo|la cuota))|"
          r"facturamos(?:\s+a\s+[^,.;]{1,40}?)?|"
          r"(?:invoices?|bills?|charges?)\s+(?:us|me)|we\s+(?:invoice|bill)(?:\s+them)?")
_MOVED = (r"(?:ha|han)\s+(?:pasado|cambiado|movido)\s+(?:la facturacion|el recibo|los recibos|el cargo|la fecha de "
          r"(?:la )?factura)|(?:han|ha)\s+pasado\s+a\s+facturar|(?:moved|changed|switched)\s+(?:their|its|our|the)\s+"
          r"(?:invoicing|billing|invoice date|billing date|direct debit)")
_MONTH_PART = {"a primeros de mes": ("a primeros de mes", "at the start of each month"),
               "a principios de mes": ("a primeros de mes", "at the start of each month"),
               "a final de mes": ("a final de mes", "at the end of each month"),
               "a finales de mes": ("a final de mes", "at the end of each month"),
               "el ultimo dia del mes": ("a final de mes", "at the end of each month"),
               "el ultimo dia de cada mes": ("a final de mes", "at the end of each month"),
               "at the start of each month": ("a primeros de mes", "at the start of each month"),
               "at the start of every month": ("a primeros de mes", "at the start of each month"),
               "at the end of each month": ("a final de mes", "at the end of each month"),
               "at the end of every month": ("a final de mes", "at the end of each month"),
               "at the end of the month": ("a final de mes", "at the end of each month"),
               "on the last day of the month": ("a final de mes", "at the end of each month")}
_BILLING_DAY = re.compile(
    rf"\b(?:(?P<bills>{_BILLS})\s+(?:(?:siempre|always|now|ahora)\s+)?|(?P<moved>{_MOVED})\s+(?:al?|to)\s+)"
    r"(?:(?:el\s+)?(?:dia\s+)?(?P<es>\d{1,2})(?!\d|\s*(?:dias|%|euros|€|h\b|:))(?:\s+de\s+cada\s+mes|\s+del\s+mes)?"
    r"|(?:on\s+)?the\s+(?P<en>\d{1,2})(?:st|nd|rd|th)(?:\s+of\s+(?:each|every|the)\s+month)?"
    r"|(?P<end>" + "|".join(sorted(_MONTH_PART, key=len, reverse=True)) + r"))(?![\w.,]\d)")


def _rule_billing_day(s: Sentence) -> Iterator[Found]:
    m = _BILLING_DAY.search(s.low)
    if not m or s.negated(m.start()) or "?" in s.text:
        return
    english = bool(m.group("en")) or bool(re.match(r"(?:invoices?|bills?|charges?|we|moved|changed|switched)\b",
                                                   m.group("bills") or m.group("moved") or ""))
    if m.group("end"):
        value = _MONTH_PART[m.group("end")][1 if english else 0]
    else:
        day = int(m.group("es") or m.group("en"))
        if not 1 <= day <= 31:
            return
        value = f"on the {_ordinal(day)} of each month" if english else f"el día {day} de cada mes"
    yield Found("dia_facturacion", value, "contact_or_org", m.start())


def _ordinal(day: int) -> str:
    return f"{day}{'th' if 10 <= day % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(day % 10, 'th')}"


# The language a customer's or supplier's people like to be spoken to in: "Con los de Frutas Medina mejor hablar en
# euskera", "Kai at Nordwind speaks Spanish, so you can write to him in Spanish", "a Hierros Olano escríbeles en
# inglés". The writer's own ("háblame en inglés") is personal._rule_language.
_CONTACT_LANGUAGE = re.compile(
    r"\b(?:(?:mejor|siempre|hay que|preferiblemente)\s+)?(?:hablar|escribir|hablarles?|escribirles?|hablales|"
    r"escribeles|hablale|escribele|contestarles?|hablan|prefieren|prefiere|speaks?|prefers?|"
    r"(?:write|talk|speak|reply|email)\s+(?:to\s+)?(?:him|her|them))\s+(?:siempre\s+|always\s+|only\s+|solo\s+)?"
    r"(?:(?:en|in)\s+)?(?P<v>" + "|".join(LANGUAGES) + r")\b")


def _rule_contact_language(s: Sentence) -> Iterator[Found]:
    m = _CONTACT_LANGUAGE.search(s.low)
    if m and not s.negated(m.start()) and "?" not in s.text:
        yield Found("idioma", LANGUAGES[m.group("v")], "contact", m.start(), imperative=True)


# Amounts a family knows the type of, normalised as "1.200 €": what a contact owes, a minimum order.
_MONEY = (r"(?P<a>(?P<pre>[€$£])\s*(?P<n1>\d[\d.,]*)|(?P<n2>\d[\d.,]*)\s*(?P<post>€|euros?|eur|dollars?|\$|"
          r"pounds?|libras?|£))")
# "unos 3.600 euros", "about 3,600 euros": the amount as said, which the value keeps without the "about".
_ABOUT = r"(?:unos\s+|unas\s+|alrededor de\s+|cerca de\s+|casi\s+|about\s+|around\s+|nearly\s+|almost\s+|roughly\s+)?"
_MONEY_FACTS = [(re.compile(p), attribute) for p, attribute in (
    (rf"\b(?:nos|me)\s+debe(?:n)?\s+(?:(?:todavia|aun|ya|ahora)\s+)*{_ABOUT}{_MONEY}", "deuda"),
    (rf"\bowes?\s+(?:us|me)\s+(?:(?:still|now|already)\s+)*{_ABOUT}{_MONEY}", "deuda"),
    (rf"\b(?:el\s+)?pedido\s+minimo(?:\s+(?:de|para)\s+(?P<of>.+?))?\s+es\s+(?:ahora\s+)?(?:de\s+)?{_MONEY}",
     "pedido_minimo"),
    (rf"\b(?:(?P<of>\S+(?:\s+\S+){{0,3}}?)'s\s+)?minimum\s+order(?:\s+(?:at|for|with)\s+(?P<of2>.+?))?\s+is\s+"
     rf"(?:now\s+)?{_MONEY}", "pedido_minimo"),
)]
_CURRENCY = {"€": "€", "euro": "€", "euros": "€", "eur": "€", "$": "$", "dollar": "$", "dollars": "$", "£": "£",
             "pound": "£", "pounds": "£", "libra": "£", "libras": "£"}


def money(number: str, currency: str) -> str:
    """"€1,200", "1200 euros", "1.200,50 €" -> "1.200 €", "1.200,50 €"."""
    number = number.rstrip(".,")
    m = re.fullmatch(r"(?P<int>\d{1,3}(?:[.,]\d{3})+|\d+)(?:[.,](?P<dec>\d{1,2}))?", number)
    if not m:
        return f"{number} {currency}"
    whole = int(re.sub(r"\D", "", m.group("int")))
    text = f"{whole:,}".replace(",", ".")
    return f"{text},{m.group('dec').ljust(2, '0')} {currency}" if m.group("dec") else f"{text} {currency}"


def _rule_money(s: Sentence) -> Iterator[Found]:
    for regex, attribute in _MONEY_FACTS:
        m = regex.search(s.low)
        if not m or s.negated(m.start()):
            continue
        number = m.group("n1") or m.group("n2")
        value = money(number, _CURRENCY[m.group("pre") or m.group("post")])
        of = next((g for g in ("of", "of2") if m.groupdict().get(g)), None)
        yield Found(attribute, value, "contact" if attribute == "deuda" else "contact_or_org", m.start(),
                    (m.start(of), m.end(of)) if of else None)
        return


# "5% de rebaja si paga al contado", "10% off if they pay upfront": a discount and its condition.
_DISCOUNT_ANY = re.compile(r"\b(?P<n>\d{1,2}(?:[.,]\d)?)\s*(?:%|por ciento|percent)\s+(?:de\s+)?(?:descuento|rebaja|dto|"
                           r"discount|off)\b")
_CONDITION = re.compile(r"\s*,?\s*(?P<c>(?:si|por|cuando|en|if|for|when|on)\s+[^,.;!?]{3,50})")


def _rule_discount(s: Sentence) -> Iterator[Found]:
    for regex in _DISCOUNT:
        m = regex.search(s.low)
        if m and not s.negated(m.start()):
            yield Found("descuento", f"{int(m.group('n'))}%" + _condition(s, m.end()), "contact_or_org", m.start())
            return
    m = _DISCOUNT_ANY.search(s.low)
    if m and not s.negated(m.start()):
        n = m.group("n").replace(",", ".")
        yield Found("descuento", f"{n}%" + _condition(s, m.end()), "contact_or_org", m.start())


def _condition(s: Sentence, at: int) -> str:
    m = _CONDITION.match(s.text, at)
    return f" {clean_value(m.group('c'))}" if m else ""


# "Ramón lleva las cuentas", "ahora las lleva Lucía Sanchis", "Tom handles our books": who keeps the
# accounts is the contact person.
_ACCOUNTS = r"(?:las cuentas|la contabilidad|las facturas|la facturacion|los pagos|los cobros|los numeros|"
_ACCOUNTS += r"the books|the accounts|our books|our accounts|the accounting|our accounting|the invoices|the billing)"
_KEEPER_BEFORE = re.compile(rf"\s+(?:ahora\s+|now\s+|ya\s+)?(?:lleva|llevara|gestiona|se encarga de|se ocupa de|"
                            rf"handles|keeps|does|manages|runs|looks after|takes care of)\s+{_ACCOUNTS}")
_KEEPER_AFTER = re.compile(r"\b(?:las|la|los|lo)\s+(?:lleva|gestiona|llevara)\s+(?:ahora\s+|ya\s+)?(?P<val>)|"
                           rf"\b{_ACCOUNTS}\s+(?:las|la|los|lo)?\s*(?:lleva|gestiona|llevara)\s+(?:ahora\s+)?(?P<val2>)|"
                           rf"\b{_ACCOUNTS}\s+(?:are|is)\s+(?:now\s+)?(?:handled|kept|done|managed)\s+by\s+(?P<val3>)")


_ASKING = {"quien", "who", "que", "what", "el", "la"}


def _rule_accounts_keeper(s: Sentence) -> Iterator[Found]:
    if _WORK_DONE_BY.search(s.low):
        return  # "los impuestos nos los lleva Asesoría Pons": the business's adviser (`_rule_provider`)
    m = _KEEPER_AFTER.search(s.low)
    if m and not s.negated(m.start()):
        at = next(m.start(g) for g in ("val", "val2", "val3") if m.group(g) is not None)
        name = name_at(s, at, strong=False)
        if name:
            yield Found("persona_contacto", name, "contact_or_org", m.start())
            return
    m = _KEEPER_BEFORE.search(s.low)
    if m and not s.negated(m.start()):
        name = _name_before(s, m.start())
        if name:
            yield Found("persona_contacto", name, "contact_or_org", m.start())


def _name_before(s: Sentence, end: int) -> str | None:
    """The capitalised name that ends at `end` ("Now Lucy Sanchis| handles..."), without the words that open a
    sentence; None for a question's "who" or "what"."""
    run = re.search(r"([A-ZÁÉÍÓÚÑ][\w'\-]*(?:\s+[A-ZÁÉÍÓÚÑ][\w'\-]*){0,2})$", s.text[:end])
    words = run.group(1).split() if run else []
    while words and fold(words[0]) in NOT_NAMES | NAME_STOP:
        words = words[1:]
    return " ".join(words) if words and fold(words[0]) not in _ASKING else None


_PHONE = re.compile(r"(?<![\w+])(?:\+|00)?\d[\d .-]{7,15}\d(?!\w)")
_EMAIL_CUE = re.compile(r"\b(?:email|e-mail|correo|mail|direccion de correo|email address)\b")
# "Marisa's number", "su número", "the number for Roig Tiles", "call him on ...", "llamarle al ..." are a phone's
# too; an order's or an account's are not.
_PHONE_CUE = re.compile(r"\b(?:telefono|movil|tlf|tel|phone|mobile)(?:\s+number)?\b|"
                        r"\b(?:call|ring|text|reach)\s+(?:him|her|them)\s+on\b|\b(?:llamar|llama|llamad)(?:le|la|les)\s+al\b|"
                        r"(?:'s|\b(?:his|her|their|su))\s+(?:number|numero)\b|"
                        r"\b(?:the|el)\s+(?:number|numero)(?=\s+(?:for|of|de)\b(?!\s+(?:cuenta|pedido|factura|serie|"
                        r"referencia|order|invoice|account|reference)))")
_OF_SLOT = re.compile(r"\s+(?:de facturacion\s+|de contacto\s+)?(?:de|del|of|at|for|from)\s+(?P<who>.+?)\s+(?:es|is)\b")
_OWN_BEFORE = re.compile(r"\b(?:nuestro|mi|our|my)\s+(?:(?:new|nuevo)\s+)?$")


# Where invoices go, said before the address with no word for email: "their invoices to go to accounts@..."
_SENT_TO = re.compile(r"\b(?:invoices?|bills?|statements?|quotes?|facturas?|albaranes|presupuestos?)\b[^.;:]{0,40}?\b(?:to|a|al)\s*$")


def _rule_email_phone(s: Sentence) -> Iterator[Found]:
    for cue_re, value_re, attribute in ((_EMAIL_CUE, EMAIL, "email"), (_PHONE_CUE, _PHONE, "telefono")):
        cue = cue_re.search(s.low)
        found = value_re.search(s.text, cue.end()) if cue else None
        if attribute == "email" and not found:  # the address is its own cue after where invoices go
            found = cue = next((m for m in EMAIL.finditer(s.text) if _SENT_TO.search(s.low[: m.start()])), None)
        if not found or (attribute == "telefono" and find_bank_account(s.text)):
            continue
        value = found.group().lower().rstrip(".") if attribute == "email" else re.sub(r"[^\d+]", "", found.group())
        if attribute == "telefono" and not 9 <= len(value.lstrip("+")) <= 13:
            continue
        slot = _OF_SLOT.match(s.low, cue.end())
        own = _OWN_BEFORE.search(s.low[: cue.start()])
        if own and own.group().startswith(("mi", "my")) and re.match(r"movil|mobile", s.low[cue.start():]):
            yield Found(attribute, value, "self", cue.start())  # "my mobile is ...": the writer's own
        elif own:
            yield Found(attribute, value, "org", cue.start())
        else:
            yield Found(attribute, value, "contact", cue.start(), (slot.start("who"), slot.end("who")) if slot else None)


_ACCOUNT_CUE = re.compile(r"\b(?:iban|cuenta|numero de cuenta|account|bank details|datos bancarios|ccc)\b")
_OWN = re.compile(r"\b(?:nuestro|nuestra|nuestros|mi|mis|our|my)\s+(?:nuevo\s+|nueva\s+|new\s+)?(?:iban|cuenta|numero de cuenta|"
                  r"bank account|account|datos bancarios|bank details)\b")


def _rule_bank_account(s: Sentence) -> Iterator[Found]:
    account = find_bank_account(s.text)
    if not account:
        return
    cue = _ACCOUNT_CUE.search(s.low)
    at = cue.start() if cue else 0
    yield Found("cuenta_bancaria", account, "org" if _OWN.search(s.low) else "contact", at)


# A change of prices: "los precios suben un 3% el 1 de enero", "Muebles Soler sube sus precios un 4% en febrero",
# "Harbor Foods is putting its prices up 6% from May", "Printwise's prices are going up 3% next year". Whose prices
# they are: a name before the verb that raises them or owning them ("X's prices", "los precios de X"), else the
# business's (prices said with no owner, or "we"/"our"). A change of someone's rent or fee is theirs (a note).
_PRICES = r"(?:precios?|tarifas?|prices?|rates?)"
_PRICES_OF = r"(?:(?:sus|their|its|his|her|our|nuestr[oa]s|los|las|the|el|la)\s+)?"
_VERB = (r"(?P<verb>suben|sube|subiran|subira|han subido|ha subido|bajan|baja|bajaran|bajara|han bajado|ha bajado|"
         r"go up|goes up|going up|went up|gone up|increase[sd]?|increasing|rise[sn]?|rising|rose|go down|goes down|"
         r"going down|went down|drop(?:s|ped)?|decrease[sd]?|decreasing|fall(?:s|en)?|fell)")
_AGENT_VERB = (r"(?P<verb>sube|suben|subimos|subiremos|baja|bajan|bajamos|bajaremos|raise[sd]?|raising|"
               r"puts?|putting|increase[sd]?|increasing|lower(?:s|ed|ing)?|cut(?:s|ting)?|reduce[sd]?|reducing)")
_BY = r"\s+(?:up\s+|down\s+)?(?:(?:un|en|by|a)\s+)?(?P<n>\d{1,2}(?:[.,]\d{1,2})?)\s*(?:%|por ciento|percent)"
_PRICE_CHANGES = [re.compile(p) for p in (
    # "Muebles Soler sube sus precios un 4%", "we're lowering our prices 5%", "X is putting its prices up 6%"
    rf"^(?P<who>.*?)\b(?:(?:is|are|was|were|'s|'re|will|va a|van a|vamos a)\s+)?{_AGENT_VERB}\s+{_PRICES_OF}{_PRICES}{_BY}",
    # "los precios suben un 3%", "Printwise's prices are going up 3%", "los precios de Hierros Olano suben un 5%"
    rf"^(?P<pre>.*?)\b{_PRICES_OF}(?:(?P<whose>[\w&.\- ]+?)'s\s+)?{_PRICES}(?:\s+de\s+(?P<of>[\w&.\- ]+?))?\s+"
    rf"(?:(?:will|are|is|are going to|is going to|van a|va a)\s+)?{_VERB}{_BY}",
)]
_WHEN = re.compile(r"\s*(?P<when>(?:(?:from|desde|a partir de|starting|as of|in|en|on|el|the|next|this|este|esta|"
                   r"el proximo|el mes|el ano)\s+)+[^,.;!?]{2,30}?)\s*(?:[,.;!?]|$)")
_WHEN_BEFORE = re.compile(r"(?:from|desde|a partir de|starting|as of|in|en|on|next|this|este|esta|el proximo)\s+"
                          r"[^,.;!?]{2,30}?,?")
_WE = re.compile(r"\b(?:we|we're|we are|we'll|our|nosotros|vamos)\b|(?:amos|emos)\b")


def _rule_price_change(s: Sentence) -> Iterator[Found]:
    for regex in _PRICE_CHANGES:
        m = regex.search(s.low)
        if m is None or s.negated(m.start("verb")):
            continue
        up = not re.match(r"(?:baj|go down|goes down|going down|went down|drop|decreas|fall|fell|lower|cut|reduc)",
                          m.group("verb"))
        # When: said after the change ("un 3% el 1 de enero", "6% from May") or before it ("From March prices...").
        groups = m.groupdict()
        lead = "who" if groups.get("who") else "pre" if groups.get("pre") else None
        before = lead is not None and _WHEN_BEFORE.fullmatch(groups[lead].strip())
        when = _WHEN.match(s.low, m.end())
        span = (when.start("when"), when.end("when")) if when else \
            (m.start(lead), m.start(lead) + len(groups[lead].rstrip(" ,"))) if before else None
        said = clean_value(s.text[span[0]:span[1]]) if span else ""
        value = f"{'+' if up else '-'}{m.group('n').replace(',', '.')}%" + (f" {said[:1].lower()}{said[1:]}" if said else "")
        who = next(((m.start(g), m.end(g)) for g in ("whose", "of") if groups.get(g)), None)
        if who is None and lead == "who" and not before and not _WE.search(groups["who"]):
            who = (m.start("who"), m.end("who"))
        target = "contact_or_org" if who else "org"
        yield Found("cambio_precios", value, target, m.start("verb"), who)
        return


# When the business opens or closes, every day it does: "cerramos a las 20:00", "la tienda abre a las 9", "we close at
# 7pm", "from now on we open at 10am". A day named ("los sábados") is that day's hours, left to a note.
_HOURS = re.compile(r"\b(?:(?P<es_open>abrimos|abre|abriremos|abrira|vamos a abrir)|(?P<es_close>cerramos|cierra|"
                    r"cerraremos|cerrara|vamos a cerrar))\s+(?:ahora\s+|ya\s+)?a\s+las\s+"
                    r"(?P<es>\d{1,2}(?:[:.]\d{2})?(?:\s*h)?)\b|\b(?:we|we'll|we will|it|the shop|the office)\s+(?:now\s+)?"
                    r"(?:'re\s+|will\s+|'ll\s+|are going to\s+)?"
                    r"(?:(?P<en_open>opens?)|(?P<en_close>closes?))\s+(?:now\s+)?at\s+"
                    r"(?P<en>\d{1,2}(?:[:.]\d{2})?\s*(?:am|pm)?)(?!\w)")
_OURS = re.compile(r"^(?:(?:ahora|now|ya|desde (?:el |la |este |esta )?\w+|from now on|from (?:next |this )?\w+|starting "
                   r"(?:next |this )?\w+|a partir de(?:l)? (?:(?:la|el|este|esta) )?(?:proxim[oa] )?\w+(?: que viene)?),?\s+)?"
                   r"(?:la tienda|el taller|la oficina|el almacen|el local|we|the shop|the office)?\s*")
_DAY_NAMED = re.compile(r"\b(?:lunes|martes|miercoles|jueves|viernes|sabados?|domingos?|mondays?|tuesdays?|"
                        r"wednesdays?|thursdays?|fridays?|saturdays?|sundays?|weekends?|fines de semana|festivos)\b")


# From when the hours hold ("desde el lunes", "a partir de mañana", "from tomorrow"): no day of their own.
_FROM_WHEN = re.compile(r"\b(?:desde|a partir de(?:l)?|from|starting)\s+(?:el\s+|this\s+|next\s+)?\w+")
# One day's hours ("mañana cerramos a las 14", "today we close at 3"): no standing fact.
_ONE_DAY = re.compile(r"\b(?:manana|hoy|esta (?:tarde|noche|semana)|este (?:finde|fin de semana)|tomorrow|today|tonight|"
                      r"this (?:afternoon|evening|week|weekend))\b")


# The one weekday some hours are for, every week ("cerramos a las 8 los viernes", "we open at 10 on Sundays"), with
# the words that lead to it.
_ON_DAY = re.compile(rf"(?:\b(?:los|el|on|every|cada)\s+)?\b(?P<d>{WEEKDAY_WORD})\b")


def _rule_hours(s: Sentence) -> Iterator[Found]:
    m = _HOURS.search(s.low)
    standing = _FROM_WHEN.sub(" ", s.low)
    if not m or _ONE_DAY.search(standing) or s.negated(m.start()) or "?" in s.text:
        return
    # Only the business's own hours, said in the first person or of its premises.
    if not _OURS.fullmatch(s.low[: m.start()].strip() + (" " if m.start() else "")) and \
            not s.low[m.start():].startswith(("abrimos", "cerramos", "abriremos", "cerraremos", "vamos a", "we")):
        return
    opens = m.group("es_open") or m.group("en_open")
    attribute, value = "hora_apertura" if opens else "hora_cierre", (m.group("es") or m.group("en")).strip()
    if _DAY_NAMED.search(standing):
        # Hours of one weekday are that day's fact, beside the business's usual hours, not instead of them.
        days = list(_ON_DAY.finditer(s.low))
        if len(days) != 1 or _DAY_NAMED.search(standing.replace(days[0].group(), " ")):
            return  # several days, a weekend or holidays: the note keeps them as said
        day, said = days[0], s.text[days[0].start():days[0].end()]
        english = day.group("d").startswith(_DAYS_EN)
        lead = day.group().split()[0]
        if not (lead in ("los", "every", "cada") or day.group("d").endswith("s") and (english or lead != "el")):
            return  # "el sábado cerramos a las 2", "on Saturday": that one day, no standing hours
        said = said[:1].lower() + said[1:] if english else said.lower()  # "on Sundays", "los viernes"
        attribute, value = f"{attribute}_{_day_key(day.group('d'))}", f"{value} {said}"
    yield Found(attribute, value, "org", m.start())


# When a thing of the business falls due: the van's inspection or insurance, the shop's lease ("La furgoneta pasa la
# ITV en marzo", "The van's insurance renews on the 1st of June", "el alquiler del local vence en 2028"). One fact a
# thing and what falls due (`vencimiento_itv_furgoneta`), which the next year's date replaces; the writer's own car
# ("my car's MOT is due in May") is the writer's.
_DUE_WHAT = {"itv": "itv", "mot": "itv", "revision": "revision", "service": "revision", "seguro": "seguro",
             "insurance": "seguro", "alquiler": "alquiler", "lease": "alquiler", "contrato": "contrato",
             "licencia": "licencia", "licence": "licencia", "license": "licencia", "road tax": "impuesto",
             "impuesto de circulacion": "impuesto"}
_DUE_THING = {"furgoneta": "furgoneta", "furgo": "furgoneta", "furgonetas": "furgoneta", "camioneta": "furgoneta",
              "van": "furgoneta", "vans": "furgoneta", "camion": "camion", "lorry": "camion", "truck": "camion",
              "local": "local", "tienda": "local", "nave": "local", "taller": "local", "oficina": "local",
              "almacen": "local", "shop": "local", "premises": "local", "warehouse": "local", "office": "local",
              "unit": "local", "coche": "coche", "car": "coche", "moto": "moto", "motorbike": "moto"}
_ALT = "|".join(sorted(_DUE_WHAT, key=len, reverse=True))
_THING = "|".join(sorted(_DUE_THING, key=len, reverse=True))
_WHOSE = r"(?P<whose>el|la|los|las|del|de la|nuestr[oa]s?|mi|mis|our|my|the|its|el de la|la de la)"
_WHEN_DUE = (rf"(?P<when>(?:en|el|a finales de|a primeros de|in|on|at the end of|by|next|el proximo|este|this)\s+"
             rf"(?:(?:the\s+)?\d{{1,2}}(?:st|nd|rd|th)?\s+(?:de\s+|of\s+)?)?(?:{MONTH_WORD}|\d{{4}}|month|mes|year|ano)"
             r"(?:\s+(?:de\s+)?\d{4})?)")
_DUE = [re.compile(p) for p in (
    # "la furgoneta pasa la ITV en marzo", "al camión le toca la revisión en mayo"
    rf"\b{_WHOSE}\s+(?P<thing>{_THING})\s+(?:\w+\s+)?(?:pasa|tiene|le toca|toca|hace)\s+(?:la\s+|el\s+)?"
    rf"(?P<what>{_ALT})\s+{_WHEN_DUE}",
    # "el seguro de la furgoneta vence en noviembre", "the lease on the shop runs out in 2028"
    rf"\b(?P<what>{_ALT})\s+(?:de|del|on|of|for)\s+(?:{_WHOSE}\s+)?(?P<thing>{_THING})\s+(?:\w+\s+)?(?:vence|caduca|"
    rf"se renueva|renueva|termina|acaba|is due|expires|renews|runs out|ends|comes up)\s+{_WHEN_DUE}",
    # "the van's insurance renews on the 1st of June", "our van's MOT is due in April"
    rf"\b{_WHOSE}\s+(?P<thing>{_THING})'s\s+(?P<what>{_ALT})\s+(?:\w+\s+)?(?:is due|expires|renews|runs out|ends|"
    rf"comes up)\s+{_WHEN_DUE}",
)]


def _rule_due(s: Sentence) -> Iterator[Found]:
    for regex in _DUE:
        m = regex.search(s.low)
        if m and not s.negated(m.start()) and "?" not in s.text:
            thing = _DUE_THING[m.group("thing")]
            whose = m.group("whose")
            mine = whose in ("mi", "mis", "my") or (thing in ("coche", "moto") and whose not in ("nuestro", "nuestra",
                                                                                                 "our"))
            value = clean_value(s.text[:m.end()])  # as said, from the sentence's start ("Our lease on the shop...")
            yield Found(f"vencimiento_{_DUE_WHAT[m.group('what')]}_{thing}", value, "self" if mine else "org",
                        m.start())
            return


# The business's own accountant, tax adviser, lawyer or insurer, by name: "Our accountant is Helen Price", "nuestra
# gestoría nueva es Gestoría Martín", "Sam Green is our lawyer". One at a time: a new one replaces the last.
_ADVISERS = {"contable": "contable", "accountant": "contable", "bookkeeper": "contable", "gestor": "gestoria",
          "gestora": "gestoria", "gestoria": "gestoria", "asesor fiscal": "gestoria", "asesora fiscal": "gestoria",
          "asesor": "gestoria", "asesora": "gestoria", "asesoria": "gestoria", "tax advisor": "gestoria",
          "tax adviser": "gestoria", "abogado": "abogado", "abogada": "abogado", "lawyer": "abogado",
          "solicitor": "abogado", "attorney": "abogado", "aseguradora": "aseguradora", "insurer": "aseguradora",
          "insurance broker": "aseguradora", "corredor de seguros": "aseguradora"}
_ROLE = "(?P<role>" + "|".join(sorted(_ADVISERS, key=len, reverse=True)) + ")"
_PROVIDER = re.compile(r"^(?:(?:ahora|now|from now on|a partir de (?:ahora|hoy)),?\s+)?(?P<whose>our|nuestr[oa]|my|mi)\s+"
                       rf"(?:new\s+|nuev[oa]\s+)?{_ROLE}(?:\s+nuev[oa])?(?:'s name)?\s+(?:is now|now is|ahora es|es ahora|"
                       r"is|es|se llama|sera|will be)\s+")
# A change of adviser, then the new one: "hemos cambiado de gestoría, ahora nos lleva todo Asesoría Elcano", "we've
# changed accountants, now it's Hughes & Co".
_PROVIDER_CHANGED = re.compile(rf"\b(?:hemos cambiado de|cambiamos de|we(?:'ve| have)? (?:changed|switched)|we (?:changed|"
                               rf"switched))\s+{_ROLE}s?\b[^.;]{{0,12}}?\s+(?:(?:ahora|now)\s+)?(?:nos lleva(?:n)?"
                               r"(?: todo)?|es|la nueva es|el nuevo es|it's|it is|we use|we're with|the new one is)\s+")
_PROVIDER_AFTER = re.compile(rf"\s+(?:is|es|sera|will be)\s+(?:now\s+|ahora\s+)?(?:our|nuestr[oa])\s+"
                             rf"(?:new\s+|nuev[oa]\s+)?{_ROLE}\b")


# A firm's name as written, "&" and "y" inside it and its legal form after it: "Hughes & Co", "Sanz y Asociados",
# "Aceites Cazorla S.L." (not "Aceites Cazorla S").
_FIRM = re.compile(r"\s*([A-ZÁÉÍÓÚÑ][\w'\-]*(?:\s+(?:&\s+|y\s+|and\s+)?(?!S\.)[A-ZÁÉÍÓÚÑ][\w'\-]*){0,3}"
                   r"(?:\s+S\.\s?[LA]\.(?:U\.)?)?)")


def _firm_at(s: Sentence, start: int) -> str | None:
    m = _FIRM.match(s.text, start)
    return m.group(1) if m and fold(m.group(1).split()[0]) not in NAME_STOP else None


def _rule_provider(s: Sentence) -> Iterator[Found]:
    m = _PROVIDER.search(s.low)
    if m:
        name = _firm_at(s, m.end())
        if name:
            # "our accountant" is the business's; "my accountant" the writer's own (the business's too only where
            # the writer says so)
            yield Found(_ADVISERS[m.group("role")], name, "self" if m.group("whose") in ("my", "mi") else "org",
                        m.start())
        return
    m = _PROVIDER_CHANGED.search(s.low)
    if m and (name := _firm_at(s, m.end())):
        yield Found(_ADVISERS[m.group("role")], name, "org", m.start())
        return
    m = _PROVIDER_AFTER.search(s.low)
    if m and not s.negated(m.start()):
        name = _name_before(s, m.start())
        if name:
            yield Found(_ADVISERS[m.group("role")], name, "org", m.start())
        return
    m = _INSURED_WITH.search(s.low)
    if m and not s.negated(m.start()) and (name := _firm_at(s, m.end())):
        yield Found("aseguradora", name, "self" if m.group("whose") in ("my", "mi") else "org", m.start())
        return
    m = _BY_WORK.search(s.low) or _WORK_DONE_BY.search(s.low)
    if m:
        name = _firm_at(s, m.end())
        if name:
            yield Found(_WORK[m.group("work")], name, "org", m.start())


# Who the business is insured with: "Our business insurance is with Hiscox", "el seguro del local lo tenemos con Mapfre",
# "estamos asegurados con Mutua Madrileña".
_INSURED_WITH = re.compile(
    r"^(?:(?P<whose>our|my|nuestro|mi|el)\s+)?(?:(?:business|company|shop|public liability|van|buildings?)\s+)?"
    r"(?:insurance|seguro(?:\s+(?:de la empresa|del negocio|del local|de la tienda|de la nave|de responsabilidad civil))?)"
    r"\s+(?:is|es|esta|lo tenemos|la tenemos)\s+(?:now\s+|ahora\s+)?(?:with|con)\s+|"
    r"\b(?:we(?:'re| are)|estamos)\s+(?:now\s+|ahora\s+)?(?:insured|asegurados)\s+(?:with|con)\s+")


# Who does a piece of the business's paperwork, by that work: "la asesoría que nos lleva los impuestos ahora es
# Asesores Beltrán", "the firm that does our payroll is now Clarke Accounting".
_WORK = {"impuestos": "gestoria", "nominas": "gestoria", "papeles": "gestoria", "payroll": "gestoria",
         "taxes": "gestoria", "tax returns": "gestoria", "contabilidad": "contable", "cuentas": "contable",
         "libros": "contable", "books": "contable", "bookkeeping": "contable", "accounts": "contable",
         "seguros": "aseguradora", "insurance": "aseguradora"}
_BY_WORK = re.compile(r"^(?:(?:ahora|now),?\s+)?(?:the|la|el|quien|who)\s*(?:\w+\s+)?(?:que|that|who)?\s+(?:nos\s+)?"
                      r"(?:does|do|handles?|keeps?|runs?|lleva|llevan|hace|hacen|gestiona|gestionan)\s+"
                      r"(?:our|los|las|la|el|nuestr[oa]s?)\s+(?P<work>" + "|".join(sorted(_WORK, key=len, reverse=True)) +
                      r")\s+(?:is now|now is|is|are|ahora es|es ahora|es|son|ahora son)\s+")
# The same said of the work: "our payroll is done by Hughes & Co now", "la contabilidad nos la lleva Cuentas Claras".
# (Who keeps the accounts said so is the accounts keeper's: `_rule_accounts_keeper`.)
_PAPERWORK = [work for work, role in _WORK.items() if role != "contable"]
_WORK_DONE_BY = re.compile(r"^(?:(?:ahora|now),?\s+)?(?:our|los|las|la|el|nuestr[oa]s?)\s+(?P<work>" +
                           "|".join(sorted(_PAPERWORK, key=len, reverse=True)) + r")\s+(?:(?:is|are)\s+(?:now\s+)?"
                           r"(?:done|handled|kept|managed|run|prepared)\s+by|nos\s+(?:los|las|la|lo)\s+"
                           r"(?:lleva|llevan|hace|hacen|gestiona|gestionan)(?:\s+ahora)?)\s+")


# The business's own bank, without an account number: "la cuenta de la tienda la tenemos en Bankinter", "our business
# account is with Barclays", "nuestro banco es el Sabadell", "hemos pasado la cuenta del negocio a CaixaBank". A
# customer's or supplier's bank is their account (the policy's), and the bank one works at an employer.
_BANK_NAME = r"(?:el\s+|la\s+|the\s+)?(?P<bank>" + "|".join(sorted(BANKS, key=len, reverse=True)) + \
    r"|(?:banco|caja)\s+\w+(?:\s+\w+)?|\w+\s+bank)\b"
_OWN_ACCOUNT = r"(?:cuentas?|account|accounts|banking)(?:\s+(?:de la empresa|del negocio|de la tienda|de empresa|del taller|" \
    r"de la oficina|business|company))?"
_OWN_BANK = re.compile(
    rf"\b(?:(?:(?:la|las|nuestras?|our)\s+)?(?:business\s+|company\s+)?{_OWN_ACCOUNT}\s+(?:(?:la|las)\s+)?(?:tenemos|llevamos|"
    rf"esta|estan|es|is|are)\s+(?:en|con|with|at|in)\s+|(?:tenemos|llevamos)\s+(?:la|las)\s+{_OWN_ACCOUNT}\s+(?:en|con)\s+|"
    rf"we\s+bank\s+with\s+|(?:nuestro banco|our bank)\s+(?:es|is)\s+|(?:hemos pasado|pasamos|hemos movido|movimos|"
    rf"hemos cambiado|cambiamos|we(?:'ve| have)?\s+(?:moved|switched|changed))\s+(?:la|las|our)\s+(?:business\s+)?"
    rf"{_OWN_ACCOUNT}\s+(?:a|al|to)\s+|(?:hemos cambiado|cambiamos|we(?:'ve| have)?\s+(?:changed|switched))\s+"
    rf"(?:el banco|de banco|banks?|our bank)(?:\s+(?:de la empresa|del negocio|business|company))?\s+(?:a|al|to)\s+)"
    rf"{_BANK_NAME}")


def names_own_bank(low: str) -> bool:
    """Folded text names the business's own bank ("cambiamos el banco de la empresa al Sabadell"): no one's account."""
    return bool(_OWN_BANK.search(low))


def _rule_own_bank(s: Sentence) -> Iterator[Found]:
    m = _OWN_BANK.search(s.low)
    if m and not s.negated(m.start()):
        bank = s.text[m.start("bank"):m.end("bank")]
        yield Found(OWN_BANK, bank if any(c.isupper() for c in bank) else bank.title(), "org", m.start())


# Who the business buys a thing from, one supplier a thing at a time: "la madera se la compramos a Maderas Ruiz",
# "ahora el aceite nos lo trae Almazara Los Arcos", "compramos la fruta a Frutas Paco", "nuestro proveedor de café es
# Cafés Orbe", "Maderas Pino nos trae la madera", "we buy our timber from Kingsley Timber", "our paper supplier is
# now Tillman Paper". A new supplier of the thing replaces the last (`proveedor_<thing>`, one-valued).
_THING = r"(?P<thing>[a-z]+(?:\s+de\s+[a-z]+)?)"
_THING_EN = r"(?P<thing>[a-z]+(?:\s+[a-z]+)?)"
_BUY_WORDS = ("compramos", "pedimos", "cogemos", "encargamos")
_BRINGS_WORDS = ("trae", "traen", "sirve", "sirven", "suministra", "suministran", "vende", "venden")
_BUY = "(?:" + "|".join(_BUY_WORDS) + ")"
_BRINGS = "(?:" + "|".join(_BRINGS_WORDS) + ")"
SUPPLIER_OF = "proveedor_"
# The words a supplier fact says beyond its thing and its supplier: a note beside it must say more than these.
SUPPLY_WORDS = " ".join((*_BUY_WORDS, *_BRINGS_WORDS, "proveedor nuestro ahora buy order source get supplier supplies "
                         "supply sells sell delivers deliver our now"))
_SUPPLIED = [re.compile(p) for p in (
    rf"\b(?:el|la|los|las)\s+{_THING}(?:\s+(?:para|de)\s+(?:el|la|los|las)\s+[a-z]+)?\s+(?:ahora\s+)?(?:se\s+)?"
    rf"(?:lo|la|los|las)\s+{_BUY}\s+(?:ahora\s+)?a\s+",
    rf"\b{_BUY}\s+(?:ahora\s+)?(?:el|la|los|las|todo el|toda la)\s+{_THING}\s+a\s+",
    rf"\b(?:el|la|los|las)\s+{_THING}\s+nos\s+(?:lo|la|los|las)\s+{_BRINGS}\s+(?:ahora\s+)?",
    # the thing said before, its new supplier after: "ya no le compramos la madera a Ruiz, ahora nos la trae Pino"
    rf"\b(?:el|la|los|las)\s+{_THING}\b[^.;]{{0,60}}?\bahora\s+(?:se\s+|nos\s+)?(?:lo|la|los|las)\s+"
    rf"(?P<verb>{_BRINGS}|{_BUY}\s+a)\s+",
    rf"\bnuestro\s+proveedor\s+de\s+{_THING}\s+(?:ahora es|es ahora|es|sera|va a ser)\s+",
    rf"\bour\s+{_THING_EN}\s+supplier\s+(?:is now|is|will be)\s+",
)]
# A household buys its coffee from someone too: "we buy our X from Y" is the business's only when Y looks like a company.
_WE_BUY = re.compile(rf"\bwe\s+(?:now\s+)?(?:buy|order|source|get)\s+(?:our|all our|the)\s+{_THING_EN}\s+from\s+")
_SUPPLIES = [re.compile(p) for p in (
    rf"\s+nos\s+{_BRINGS}\s+(?:ahora\s+)?(?:el|la|los|las|todo el|toda la)\s+{_THING}\b",
    rf"\s+(?:now\s+)?(?:supplies|supply|sells|sell|delivers|deliver)\s+(?:us\s+)?(?:our|all our|the)\s+{_THING_EN}\b",
)]
# Not a thing of its own: "lo compramos todo a...", "we get everything from..."
_NO_THING = frozenset("todo resto demas everything stuff things rest lot".split())


def _thing_key(thing: str) -> str | None:
    """The thing's key in `proveedor_<key>`: its head noun, singular ("aceite de oliva" -> aceite, "coffee beans" ->
    bean), or None for "todo" and the like."""
    words = thing.split()
    head = words[0] if " de " in f" {thing} " or len(words) == 1 else words[-1]
    if head in _NO_THING or len(head) < 3:
        return None
    return head[:-1] if len(head) > 4 and head.endswith("s") and not head.endswith("ss") else head


def _rule_supplier(s: Sentence) -> Iterator[Found]:
    for regex in (*_SUPPLIED, _WE_BUY):
        m = regex.search(s.low)
        if m and not s.negated(m.start("verb") if "verb" in m.groupdict() else m.start()) and \
                (key := _thing_key(m.group("thing"))) and (name := _firm_at(s, m.end())):
            if regex is not _WE_BUY or looks_like_company(name):
                yield Found(SUPPLIER_OF + key, name, "org", m.start())
            return
    for regex in _SUPPLIES:
        m = regex.search(s.low)
        if m and not s.negated(m.start()) and (key := _thing_key(m.group("thing"))) and \
                (name := _name_before(s, m.start())):
            yield Found(SUPPLIER_OF + key, name, "org", m.start())
            return


BUSINESS_RULES = (_rule_bank_account, _rule_payment_terms, _rule_payment_method, _rule_contact_person,
                  _rule_channel_format, _rule_amounts, _rule_regime, _rule_address, _rule_tax_id, _rule_company,
                  _rule_trading_status, _rule_retention, _rule_discount, _rule_email_phone, _rule_accounts_keeper,
                  _rule_delivery_day, _rule_money, _rule_price_change, _rule_hours, _rule_provider, _rule_own_bank,
                  _rule_due, _rule_billing_day, _rule_contact_language, _rule_supplier)
