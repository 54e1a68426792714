"""API keys: owners and admins create them (the key is shown once) and revoke them; every action audited."""
from __future__ import annotations

from flask_login import current_user

from console import bp
from console.key_pages import KeyPages
from console.web import org_db, org_role_required
from memory_core.tenancy.api_keys import ORG

PAGES = KeyPages(ORG, "console.api_keys", "console/api_keys.html", session=org_db,
                 org_id=lambda: current_user.org().org_id, context=lambda: {"org": current_user.org()})


@bp.route("/api-keys", methods=["GET"])
@org_role_required("owner", "admin")
def api_keys():
    """The org's API keys; right after creating one, the new key, shown this once."""
    return PAGES.show()


@bp.route("/api-keys", methods=["POST"])
@org_role_required("owner", "admin")
def create_key():
    """Create a key, then redirect to the page that shows it once (a reload creates nothing)."""
    return PAGES.create()


@bp.route("/api-keys/<key_id>/revoke", methods=["POST"])
@org_role_required("owner", "admin")
def revoke_key(key_id: str):
    """Revoke a key: requests with it answer 401 from now on."""
    return PAGES.revoke(key_id)
