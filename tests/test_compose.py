"""docker-compose.yml and the Dockerfile agree with the server they run.

Docker does not run on these machines, so nothing here starts a container.
What can drift silently is checked instead: the services and their wiring
(Redis healthy before the servers start, AOF on with ``everysec``), and every
command line and ``THIEVES_*`` variable the files hand to ``thieves-server``,
against the real console script's ``--help`` and ``server.config``'s parser.
A renamed flag or variable in the server then fails here, not in production.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
import shlex
import subprocess
from dataclasses import fields
from pathlib import Path
from typing import Any, Mapping

import pytest
import yaml

from process_util import thieves_server_command
from server.config import Config, env_name, parse_args

ROOT = Path(__file__).resolve().parent.parent
SERVER_SERVICES = ("server", "server2")
CONFIG_ENV = {env_name(f.name) for f in fields(Config)}


# ---------------------------------------------------------------- parsing the files
def dockerfile_instructions(text: str) -> list[tuple[str, str]]:
    """``(INSTRUCTION, rest)`` pairs, continuation lines joined and comments dropped."""
    out: list[tuple[str, str]] = []
    pending = ""
    for raw in text.splitlines():
        line = raw.strip()
        if not pending and (not line or line.startswith("#")):
            continue
        if line.startswith("#"):  # a comment inside a continued instruction
            continue
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        full = pending + line
        pending = ""
        word, _, rest = full.partition(" ")
        out.append((word.upper(), rest.strip()))
    return out


def exec_form(rest: str) -> list[str]:
    """CMD/ENTRYPOINT must be the JSON (exec) form: a shell form would put /bin/sh in as PID 1
    and SIGTERM would never reach the server's graceful shutdown."""
    value = json.loads(rest)
    assert isinstance(value, list) and all(isinstance(v, str) for v in value), rest
    return value


def dockerfile_env(instructions: list[tuple[str, str]]) -> dict[str, str]:
    env: dict[str, str] = {}
    for word, rest in instructions:
        if word == "ENV":
            for pair in shlex.split(rest):
                key, sep, value = pair.partition("=")
                assert sep, f"ENV {rest!r}: use the KEY=VALUE form"
                env[key] = value
    return env


def last(instructions: list[tuple[str, str]], word: str) -> str | None:
    found = [rest for w, rest in instructions if w == word]
    return found[-1] if found else None


@pytest.fixture(scope="module")
def dockerfile() -> list[tuple[str, str]]:
    return dockerfile_instructions((ROOT / "Dockerfile").read_text())


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    data = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    assert isinstance(data, dict)
    return data


@pytest.fixture(scope="module")
def help_options() -> set[str]:
    """Every ``--option`` the installed ``thieves-server --help`` lists."""
    done = subprocess.run([*thieves_server_command(), "--help"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    options = set(re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*", done.stdout))
    assert "--redis-url" in options and "--host" in options
    return options


# ---------------------------------------------------------- what a command line must pass
def effective_argv(service: Mapping[str, Any], instructions: list[tuple[str, str]]) -> list[str]:
    """What the container runs, by Docker's rules: the service's entrypoint replaces the image's
    and then drops the image's CMD; the service's command replaces CMD."""
    as_list = lambda v: shlex.split(v) if isinstance(v, str) else list(v)  # noqa: E731
    image_entry = exec_form(last(instructions, "ENTRYPOINT") or "[]")
    image_cmd = exec_form(last(instructions, "CMD") or "[]")
    if "entrypoint" in service:
        entry, cmd = as_list(service["entrypoint"]), []
    else:
        entry, cmd = image_entry, image_cmd
    if "command" in service:
        cmd = as_list(service["command"])
    return entry + cmd


def cli_problems(argv: list[str], env: Mapping[str, str], help_options: set[str]) -> tuple[list[str], Config | None]:
    """Why ``argv`` with ``env`` would not start ``thieves-server`` as written (empty: it would)."""
    problems: list[str] = []
    if not argv or Path(argv[0]).name != "thieves-server":
        return [f"{argv[:1]} does not run thieves-server"], None
    for arg in argv[1:]:
        option = arg.split("=", 1)[0]
        # Exact names only: argparse would also take an abbreviation that a later option breaks.
        if option.startswith("--") and option not in help_options:
            problems.append(f"{option} is not an option of thieves-server --help")
    for key in env:
        if key.startswith("THIEVES_") and key not in CONFIG_ENV:
            problems.append(f"{key} is not read by server/config.py")
    config = None
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err):
            config = parse_args(argv[1:], environ=dict(env))
    except SystemExit:
        problems.append(f"thieves-server rejects {argv[1:]}: {err.getvalue().strip().splitlines()[-1:]}")
    except ValueError as exc:
        problems.append(f"a THIEVES_* value does not convert: {exc}")
    return problems, config


def test_cli_check_catches_drift(help_options: set[str]) -> None:
    """The checker itself: an unknown flag, an abbreviation, a stray variable, a bad value."""
    assert cli_problems(["thieves-server", "--host", "0.0.0.0"], {}, help_options)[0] == []
    assert "--bogus" in cli_problems(["thieves-server", "--bogus", "1"], {}, help_options)[0][0]
    assert "--redis" in " ".join(cli_problems(["thieves-server", "--redis", "redis://x"], {}, help_options)[0])
    assert "THIEVES_REDIS" in cli_problems(["thieves-server"], {"THIEVES_REDIS": "redis://x"}, help_options)[0][0]
    assert "convert" in cli_problems(["thieves-server"], {"THIEVES_PORT": "eighty"}, help_options)[0][0]
    assert "does not run" in cli_problems(["redis-server"], {}, help_options)[0][0]


# ------------------------------------------------------------------------ the compose file
def test_services(compose: dict[str, Any]) -> None:
    services = compose["services"]
    assert {"redis", *SERVER_SERVICES} <= set(services)
    assert str(services["redis"]["image"]).startswith("redis:7")
    for name in SERVER_SERVICES:
        assert services[name]["build"] == ".", name
    host_ports = [services[name]["ports"][0].split(":")[0] for name in SERVER_SERVICES]
    assert len(set(host_ports)) == len(host_ports), f"replicas must not share a host port: {host_ports}"


def test_redis_healthcheck_and_servers_wait_for_it(compose: dict[str, Any]) -> None:
    services = compose["services"]
    check = services["redis"]["healthcheck"]
    test = check["test"]
    assert test[0] in ("CMD", "CMD-SHELL")
    assert "redis-cli ping" in " ".join(test[1:])
    assert "PONG" in " ".join(test[1:]), "an -LOADING reply must not count as healthy"
    for key in ("interval", "timeout", "retries"):
        assert key in check
    for name in SERVER_SERVICES:
        assert services[name]["depends_on"]["redis"]["condition"] == "service_healthy", name


def test_redis_aof_everysec(compose: dict[str, Any]) -> None:
    command = compose["services"]["redis"]["command"]
    argv = shlex.split(command) if isinstance(command, str) else command
    assert argv[0] == "redis-server"
    opts = dict(zip(argv[1::2], argv[2::2]))
    assert opts.get("--appendonly") == "yes"
    assert opts.get("--appendfsync") == "everysec"
    assert compose["services"]["redis"]["volumes"][0].endswith(":/data"), "the AOF must outlive the container"
    text = (ROOT / "docker-compose.yml").read_text()
    assert "appendfsync everysec:" in text, "the choice of appendfsync is explained in a comment"


@pytest.mark.parametrize("name", SERVER_SERVICES)
def test_server_command_matches_the_cli(name: str, compose: dict[str, Any], dockerfile: list[tuple[str, str]],
                                        help_options: set[str]) -> None:
    service = compose["services"][name]
    env = {**dockerfile_env(dockerfile), **{k: str(v) for k, v in service.get("environment", {}).items()}}
    argv = effective_argv(service, dockerfile)
    problems, config = cli_problems(argv, env, help_options)
    assert problems == []
    assert config is not None
    assert config.host == "0.0.0.0", "in a container the server must listen on every interface"
    container_port = service["ports"][0].split(":")[-1]
    assert str(config.port) == container_port, "the published port is the one the server listens on"
    assert config.redis_url is not None, "the compose servers use the redis service, not an embedded one"
    match = re.fullmatch(r"redis://([\w.-]+):(\d+)(/\d+)?", config.redis_url)
    assert match and match.group(1) in compose["services"] and match.group(2) == "6379", config.redis_url


# -------------------------------------------------------------------------- the Dockerfile
def test_dockerfile_base_install_and_command(dockerfile: list[tuple[str, str]], help_options: set[str]) -> None:
    assert dockerfile[0] == ("FROM", "python:3.11-slim")
    install = next(rest for w, rest in dockerfile if w == "RUN" and "pip install ." in rest)
    # The compiled solver needs a C compiler at install time, and the build checks it was built.
    assert "install -y --no-install-recommends gcc" in install and "fast.available()" in install
    env = dockerfile_env(dockerfile)
    argv = effective_argv({}, dockerfile)  # `docker run IMAGE`
    problems, config = cli_problems(argv, env, help_options)
    assert problems == []
    assert config is not None and config.host == "0.0.0.0"
    assert last(dockerfile, "EXPOSE") == str(config.port)
    assert "THIEVES_REDIS_URL" not in env, "the Redis URL comes from the environment the image runs in"


def test_dockerfile_healthcheck_hits_health(dockerfile: list[tuple[str, str]]) -> None:
    rest = last(dockerfile, "HEALTHCHECK")
    assert rest is not None
    options, _, command = rest.partition("CMD ")
    assert "--interval=" in options and "--timeout=" in options
    argv = exec_form(command)
    script = argv[-1]
    assert argv[:2] == ["python", "-c"] and "/health" in script
    assert "THIEVES_PORT" in script and "THIEVES_PORT" in CONFIG_ENV
    compile(script, "<healthcheck>", "exec")  # a typo in the one-liner would fail every check


def test_dockerfile_copies_what_the_package_needs(dockerfile: list[tuple[str, str]]) -> None:
    ignored = {line.strip() for line in (ROOT / ".dockerignore").read_text().splitlines()
               if line.strip() and not line.startswith("#")}
    copied = set()
    for word, rest in dockerfile:
        if word == "COPY":
            *sources, _dest = rest.split()
            for src in sources:
                assert (ROOT / src).exists(), f"COPY {src}: no such path"
                assert src not in ignored, f"COPY {src}: excluded by .dockerignore"
                copied.add(src)
    # setuptools finds these packages (pyproject.toml), the readme it names and the
    # compiled solver's build step (setup.py).
    assert {"pyproject.toml", "setup.py", "README.md", "shared", "server", "client_cli"} <= copied


def test_the_sentinel_profile_points_a_server_at_three_sentinels_watching_a_master_and_its_replica(
        compose: dict[str, Any], dockerfile: list[tuple[str, str]], help_options: set[str]) -> None:
    services = compose["services"]
    profiled = {name for name, service in services.items() if "sentinel" in service.get("profiles", [])}
    assert profiled == {"sentinel-master", "sentinel-replica", "sentinel1", "sentinel2", "sentinel3",
                        "server-sentinel"}, "the default `docker compose up` stays as it was"
    service = services["server-sentinel"]
    env = {**dockerfile_env(dockerfile), **{k: str(v) for k, v in service.get("environment", {}).items()}}
    problems, config = cli_problems(effective_argv(service, dockerfile), env, help_options)
    assert problems == [] and config is not None
    assert config.redis_url is None and config.redis_master
    sentinels = config.redis.sentinels()
    assert len(sentinels) == 3
    for host, port in sentinels:
        script = " ".join(services[host]["entrypoint"])
        assert port == 26379 and "port 26379" in script and "--sentinel" in script
        monitor = re.search(r"sentinel monitor (\S+) (\S+) (\d+) (\d+)", script)
        assert monitor and monitor.group(1) == config.redis_master, script
        assert monitor.group(2) == "sentinel-master" and monitor.group(3) == "6379" and monitor.group(4) == "2"
    replica = services["sentinel-replica"]["command"]
    assert replica[replica.index("--replicaof") + 1:][:2] == ["sentinel-master", "6379"]
    for name in ("sentinel-master", "sentinel-replica"):
        argv = services[name]["command"]
        assert dict(zip(argv[1::2], argv[2::2])).get("--appendfsync") == "everysec", name
