#!/usr/bin/env bash
# Run here (with the project's .venv active), once, before bench/device_check.sh on a lent GPU machine: downloads into
# .whl/ the cp312 wheels of what the GPU image lacks (its Python is 3.12 and nothing can be fetched there), at the
# versions this venv has. Carry .whl with the run (carry: [".whl"]); device_check.sh installs them first.
# The list: pydantic and its parts, pyseccomp, openenv 0.10 and what `import openenv.core.rubrics` pulls in
# (fastapi, fastmcp, openai and their own needs), found by importing it in a venv holding only the image's packages.
set -euo pipefail
cd "$(dirname "$0")/.."
grep -qx '/.whl/' .git/info/exclude 2>/dev/null || echo '/.whl/' >> .git/info/exclude
NAMES="pydantic pydantic_core annotated-types typing-inspection typing_extensions pyseccomp openenv openai jiter sniffio
aiofile authlib beartype cachetools caio cffi cryptography cyclopts dnspython docstring-parser email-validator
exceptiongroup fastapi fastmcp fastmcp-slim griffelib httpcore2 httpx2 joserfc jsonref jsonschema jsonschema-path
jsonschema-specifications mcp mcp-types openapi-pydantic opentelemetry-api pathable platformdirs py-key-value-aio
pycparser pydantic-settings pyjwt pyperclip python-dotenv python-multipart referencing rich-rst rpds-py sse-starlette
starlette truststore uncalled-for uvicorn watchfiles websockets"
specs=$(python3 - $NAMES <<'PY'
import sys
from importlib.metadata import PackageNotFoundError, version
for name in sys.argv[1:]:
    try:
        print(f"{name}=={version(name)}")
    except PackageNotFoundError:
        print(name)
PY
)
mkdir -p .whl
# shellcheck disable=SC2086
python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux_2_34_x86_64 --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 \
  --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 --platform manylinux1_x86_64 -d .whl $specs
echo "$(ls .whl | wc -l) wheels, $(du -sh .whl | cut -f1) in .whl/ (the device tool carries at most 64 MiB in all)"
