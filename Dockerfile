# Kernel Playground: kernel_env API + playground on one port.
# CPU build of torch by default (builds in a few minutes); for CUDA hardware:
#   docker build --build-arg TORCH_INDEX=https://download.pytorch.org/whl/cu128 .
FROM python:3.11-slim

ARG TORCH_INDEX=https://download.pytorch.org/whl/cpu
ARG TORCH_VERSION=2.13.0

ENV PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    ENABLE_WEB_INTERFACE=true \
    PORT=7860 \
    HOME=/home/user

RUN apt-get update \
    && apt-get install -y --no-install-recommends libseccomp2 curl \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --create-home --uid 1000 user

WORKDIR /app
COPY requirements.txt /app/requirements.txt
RUN pip install "torch==${TORCH_VERSION}" --index-url "${TORCH_INDEX}" \
    && pip install -r /app/requirements.txt

# The application stays owned by root: the uid that runs candidates cannot modify it.
COPY . /app

USER 1000
EXPOSE 7860
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s CMD curl -fsS http://localhost:7860/health || exit 1
CMD ["python", "-m", "uvicorn", "app:app", "--host", "0.0.0.0", "--port", "7860", "--ws-max-size", "16777216"]
