"""Regions, islands, provinces and countries a business ships to or sells in, folded: "los pedidos de Mallorca",
"orders from Scotland" are a place's, not a customer called Mallorca. Spain's communities, provinces, islands and
larger cities, the countries around it, and Britain's and Ireland's nations, some regions and larger cities.
Santander is left out: it is a bank as often as a city (and Sabadell is one only after "in"/"en" or "de": a bank
named as the business's is read first, business._OWN_BANK)."""
from __future__ import annotations

PLACES = frozenset({
    "andalucia", "aragon", "asturias", "baleares", "canarias", "cantabria", "castilla la mancha",
    "castilla y leon", "cataluna", "catalunya", "extremadura", "galicia", "la rioja", "rioja", "madrid",
    "murcia", "navarra", "pais vasco", "euskadi", "valencia", "comunidad valenciana", "ceuta", "melilla",
    "mallorca", "menorca", "ibiza", "eivissa", "formentera", "tenerife", "gran canaria", "lanzarote",
    "fuerteventura", "la palma", "la gomera", "el hierro", "alava", "albacete", "alicante", "almeria", "avila",
    "badajoz", "barcelona", "burgos", "caceres", "cadiz", "castellon", "ciudad real", "cordoba", "cuenca",
    "girona", "gerona", "granada", "guadalajara", "guipuzcoa", "gipuzkoa", "huelva", "huesca", "jaen", "leon",
    "lleida", "lerida", "lugo", "malaga", "ourense", "orense", "oviedo", "palencia", "pontevedra", "salamanca",
    "segovia", "sevilla", "soria", "tarragona", "teruel", "toledo", "vizcaya", "bizkaia", "zamora", "zaragoza",
    "bilbao", "vigo", "gijon", "pamplona", "logrono", "valladolid", "la coruna", "a coruna", "coruna",
    "san sebastian", "donostia", "portugal", "francia", "france", "andorra", "italia", "italy", "alemania",
    "germany", "marruecos", "morocco", "europa", "europe", "scotland", "wales", "england", "northern ireland",
    "ireland", "the highlands", "cornwall", "devon", "yorkshire", "kent", "london", "the midlands",
    "leeds", "manchester", "birmingham", "liverpool", "bristol", "glasgow", "edinburgh", "cardiff", "belfast",
    "dublin", "cork", "sheffield", "newcastle", "nottingham", "leicester", "brighton", "oxford", "cambridge", "york",
    "benidorm", "marbella", "elche", "cartagena", "jerez", "getafe", "alcala de henares", "mostoles", "badalona",
    "sabadell", "terrassa", "hospitalet", "torrevieja", "santiago de compostela", "ferrol", "aviles", "ponferrada"
})
