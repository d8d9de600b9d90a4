FROM python:3.11-slim

ENV PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    UV_PYTHON_DOWNLOADS=never \
    UV_COMPILE_BYTECODE=1 \
    UV_LINK_MODE=copy \
    UV_NO_CACHE=1

RUN pip install --no-cache-dir "uv>=0.13"

WORKDIR /app

# Dependencies first (cached while only the source changes), then the project itself.
COPY pyproject.toml uv.lock README.md ./
RUN uv sync --frozen --no-dev --no-install-project
COPY src ./src
RUN uv sync --frozen --no-dev

RUN useradd --system --uid 10001 --home-dir /app truloop
USER truloop

ENV PATH="/app/.venv/bin:$PATH"
EXPOSE 8000
CMD ["truloop-assistant", "serve", "--host", "0.0.0.0", "--port", "8000"]
