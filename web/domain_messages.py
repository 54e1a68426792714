"""The domain's error messages that console pages show, marked for the catalog: `web.language.said` looks each
up by its English text, so the domain (which knows no Flask) keeps writing them as it does. A message missing
here stays in English; tests/test_console_language.py checks the pages' own words."""
from __future__ import annotations

from flask_babel import lazy_gettext as _l

MESSAGES = (
    # messages with values: the template is translated, then filled (memory_core.domain.errors)
    _l("Use at least %(num)s characters."),
    _l("Use at most %(num)s characters."),
    _l("The role must be one of %(roles)s."),
    _l("Unknown area %(area)r; areas are %(areas)s."),
    _l("Permission for %(area)s must be read or edit."),
    _l("Write areas as area=read or area=edit, not %(pair)r."),
    _l("The platform role must be one of %(roles)s."),
    # signing in
    _l("Wrong email or password."),
    _l("Too many failed sign-ins. Wait 15 minutes and try again."),
    # the review queue and memories
    _l("Unknown kind of proposal."),
    _l("Unknown area."),
    # the lists' filters and sort orders
    _l("Unknown kind of contact."),
    _l("Unknown sort order."),
    _l("Unknown status."),
    _l("Unknown kind of request."),
    _l("No such proposal."),
    _l("You may not see this proposal."),
    _l("The value cannot be empty."),
    _l("The sentence cannot be empty."),
    _l("That text is too long."),
    _l("Only an owner or admin can verify a bank account."),
    _l("A bank account cannot be edited here: reject it and ask the contact again."),
    _l("Type the new account again to confirm you checked it with the contact."),
    _l("The account you typed does not match the proposed one. Nothing was changed."),
    _l("Only an owner or admin can decide on a bank account."),
    _l("Say why you reject it: the author will read it."),
    _l("Keep the reason under 500 characters."),
    _l("Pick approve or reject."),
    _l("Select at least one proposal."),
    _l("Say why you reject them: the authors will read it."),
    _l("Someone already decided on this proposal."),
    _l("Bank accounts are verified one by one."),
    _l("You may not decide on this proposal."),
    _l("Search for at most 200 characters."),
    _l("No such memory, or you may not see it."),
    _l("Only an owner or admin can restore a version."),
    _l("Only an older version can be restored."),
    _l("You may not edit this memory."),
    _l("Only an owner or admin can change a bank account."),
    _l("That is not a valid IBAN (check the country code, length and check digits)."),
    _l("The account you typed again does not match. Nothing was changed."),
    _l("You may not pin this memory."),
    _l("Only the current version can be pinned."),
    _l("You may not delete this memory."),
    _l("No such contact, or you may not see it."),
    _l("No such trace."),
    _l("The start date is after the end date."),
    _l("Pick at most a year."),
    _l("That page link is not valid: start again from the first page."),
    _l("Only the current version can be edited; restore an old one instead."),
    _l("Nothing changed."),
    _l("No such memory of yours."),
    # settings
    _l("Pick automatic or confirmation."),
    _l("Pick Spanish, English or automatic."),
    _l("Pick secret (refused outright) or special (never learnt in the background)."),
    _l("Name: 2-80 lowercase letters, digits or underscores."),
    _l("Give a pattern of at most 500 characters."),
    _l("Keep the description under 300 characters."),
    _l("Your list already has a rule with that name."),
    _l("No such rule in your organization's list."),
    # privacy requests
    _l("Say who or what the request is about."),
    _l("No user has that email."),
    _l("No such user."),
    _l("A phone must be an international number like +34611222333."),
)
