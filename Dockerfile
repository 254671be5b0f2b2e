# tgcheat as a container image, for platforms that build images instead of reading the Procfile.
#   docker build -t tgcheat .
#   docker run -e TELEGRAM_BOT_TOKEN=... -e REDIS_URL=... -e WEBHOOK_URL=... -e WEBHOOK_SECRET=... -p 8080:8080 tgcheat
# The entry point is `tgcheat`; the default command serves the webhook on $PORT (8080 unless
# the platform sets it). The release step is the same image with `set-webhook`.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PORT=8080 \
    TGCHEAT_LOCALES_DIR=/app/locales

WORKDIR /app
COPY pyproject.toml README.md ./
COPY tgcheat ./tgcheat
COPY locales ./locales
RUN pip install . \
    && useradd --create-home --uid 10001 tgcheat \
    && mkdir -p /app/data && chown tgcheat /app/data

# An unprivileged user; ./data is where an embedded Redis (no REDIS_URL) would keep its files.
USER tgcheat
EXPOSE 8080
ENTRYPOINT ["tgcheat"]
CMD ["serve"]
