"""The Flask edge shared by the console, the review queue and the API: the request's database
sessions and the one table from domain errors to HTTP statuses. Imports memory_core, never the reverse."""
