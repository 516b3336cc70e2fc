#!/bin/bash
set -euo pipefail

MODEL_REPO="${MODEL_REPO:-culturerevolt/gemma-4-12b-heretic-abliterated-GGUF}"
MODEL_FILE="${MODEL_FILE:-gemma-4-12b-heretic-Q4_K_M.gguf}"
MODEL_REVISION="${MODEL_REVISION:-main}"
MODEL_DIR="${MODEL_DIR:-/tmp/model}"

download_model() {
    local model_path

    if [[ "$MODEL_REPO" != */* ]]; then
        echo "MODEL_REPO must be in 'org/name' format: $MODEL_REPO" >&2
        return 1
    fi

    mkdir -p "$MODEL_DIR"
    model_path="${MODEL_DIR}/${MODEL_FILE}"

    echo "Downloading model ${MODEL_REPO}/${MODEL_FILE} (revision: ${MODEL_REVISION})" >&2

    hf download "$MODEL_REPO" "$MODEL_FILE" \
        --revision "$MODEL_REVISION" \
        --local-dir "$MODEL_DIR"

    if [[ ! -s "$model_path" ]]; then
        echo "Download failed: ${model_path}" >&2
        return 1
    fi

    echo "Downloaded model to ${model_path}" >&2
}
