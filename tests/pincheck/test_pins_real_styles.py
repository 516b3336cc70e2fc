"""Pins as real code holds them (issue 31): constants, config objects, shell and Dockerfile variables,
deployment YAML, .env files and hub URLs, each through the scanner API."""

from __future__ import annotations

from pathlib import Path

import pytest

from hubwatch.pincheck.pins import _style_of, scan_text

S = "0123456789abcdef0123456789abcdef01234567"


def pins(text: str, name: str) -> list[tuple[int, str, str | None, str]]:
    found, skipped = scan_text(text, name, _style_of(name) or "")
    assert skipped == []
    for pin in found:  # every span holds exactly its revision, so --fix can rewrite it
        assert pin.span is None or text[pin.span[0]:pin.span[1]] == pin.revision, pin
    return [(p.line, str(p.repo), p.revision, p.kind) for p in found]


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        (f'MODEL_ID = "o/n"\nREVISION = "{S}"\nm = AutoModel.from_pretrained(MODEL_ID, revision=REVISION)\n',
         (3, "o/n", S, "commit")),
        ('CFG = {"model": "o/n", "revision": "abcdef1"}\nT.from_pretrained(CFG["model"], revision=CFG["revision"])\n',
         (2, "o/n", "abcdef1", "commit")),
        ('@dataclass\nclass Args:\n    model_name: str = field(default="o/n")\n    revision: str = "fedcba9"\n'
         'def main(args: Args):\n    AutoModel.from_pretrained(args.model_name, revision=args.revision)\n',
         (6, "o/n", "fedcba9", "commit")),
        ('p = argparse.ArgumentParser()\np.add_argument("--base-model", default="o/n")\n'
         'p.add_argument("--base-revision", default="1234567")\na = p.parse_args()\n'
         'AutoModel.from_pretrained(a.base_model, revision=a.base_revision)\n', (5, "o/n", "1234567", "commit")),
        ('ORG = "o"\nsnapshot_download(f"{ORG}/n", revision=os.getenv("REV", "7654321"))\n',
         (2, "o/n", "7654321", "commit")),
        ('PeftModel.from_pretrained(base, "o/adapter", revision="aaaaaaa")\n', (1, "o/adapter", "aaaaaaa", "commit")),
        ('pipe = pipeline(model="o/n", revision="v1.0")\n', (1, "o/n", "v1.0", "ref")),
        ('DiffusionPipeline.from_pretrained("o/n", revision=get_rev())\n', (1, "o/n", None, "dynamic")),
        ('SentenceTransformer("o/n", revision=sys.argv[1])\n', (1, "o/n", None, "dynamic")),
        (f'R = "{S}"\nu = f"https://huggingface.co/o/n/resolve/{{R}}/config.json"\n', (2, "o/n", S, "commit")),
        ('LOCK = {"o/n": "ddddddd"}\n', (1, "o/n", "ddddddd", "commit")),
        (f'meta = ModelMeta(\n    name="o/n",\n    revision="{S}",\n)\n', (1, "o/n", S, "commit")),  # mteb's registry
        ('cfg = ServeConfig(model_id="o/n", revision="eeeeeee")\n', (1, "o/n", "eeeeeee", "commit")),
    ],
)
def test_python_follows_values_within_the_file(source: str, expected: tuple[int, str, str | None, str]) -> None:
    assert pins(source, "x.py") == [expected]


def test_vllm_model_and_tokenizer_revisions() -> None:
    found = pins('LLM(model="o/n", revision="bbbbbbb", tokenizer="o/tok", tokenizer_revision="ccccccc")\n', "x.py")
    assert found == [(1, "o/n", "bbbbbbb", "commit"), (1, "o/tok", "ccccccc", "commit")]


def test_a_record_name_is_a_repo_only_beside_a_revision() -> None:
    assert pins('Person(name="o/n")\nRecord(name="o/n", model="p/q", revision="abcdef1")\n', "x.py") == \
        [(2, "p/q", "abcdef1", "commit")]
    assert pins('completion(model="openai/gpt-4o")\n', "x.py") == []  # a provider's model, no hub pin


def dataset_pins(text: str) -> list[tuple[int, str, str, str | None, str]]:
    found, skipped = scan_text(text, "x.py", "python")
    assert skipped == []
    return [(p.line, p.repo_type, p.name, p.revision, p.kind) for p in found]


def test_load_dataset_is_a_dataset_pin_not_a_model_pin() -> None:
    text = (f'import datasets\nfrom datasets import load_dataset as ld\nD = "o/data"\nR = "{S}"\n'
            'load_dataset("o/data", revision="abcdef1")\n'
            'datasets.load_dataset("o/data", "config", split="test", revision=R)\n'
            'ld(path=D, name="en", revision="main")\n'
            'hf_hub_download("o/d", "f", repo_type="dataset", revision="fedcba9")\n'
            'T = "dataset"\nsnapshot_download(repo_id="o/d", repo_type=T)\n'
            'snapshot_download("o/d", repo_type="model", revision="1234567")\n'
            'load_dataset("json", data_files="x.json")\n')
    assert dataset_pins(text) == [
        (5, "dataset", "datasets/o/data", "abcdef1", "commit"),
        (6, "dataset", "datasets/o/data", S, "commit"),
        (7, "dataset", "datasets/o/data", "main", "unpinned"),
        (8, "dataset", "datasets/o/d", "fedcba9", "commit"),
        (10, "dataset", "datasets/o/d", None, "unpinned"),
        (11, "model", "o/d", "1234567", "commit"),  # repo_type="model" stays a model
    ]


def test_dockerfile_args_reach_later_run_lines() -> None:
    text = (f"ARG MODEL_ID=o/n\nARG MODEL_REVISION={S}\nFROM python:3.12\nARG MODEL_REVISION\n"
            "RUN huggingface-cli download ${MODEL_ID} --revision ${MODEL_REVISION}\n"
            "RUN curl -LO https://huggingface.co/o/m/resolve/${MODEL_REVISION}/config.json\n"
            'CMD ["text-generation-launcher", "--model-id", "o/tgi", "--revision", "abcdef0"]\n')
    assert pins(text, "Dockerfile") == [(5, "o/n", S, "commit"), (6, "o/m", S, "commit"),
                                        (7, "o/tgi", "abcdef0", "commit")]


def test_dockerfile_model_and_revision_args_read_by_the_image_own_script() -> None:
    text = "ARG MODEL_NAME=o/n\nARG MODEL_REVISION=abcdef1\nRUN python fetch.py \"$MODEL_NAME\" \"$MODEL_REVISION\"\n"
    assert pins(text, "Dockerfile") == [(1, "o/n", "abcdef1", "commit")]


def test_shell_variables_defaults_and_run_time_values() -> None:
    text = ('REV="$1"\nhf download o/a --revision "$REV"\n'
            "MODEL_REVISION=${MODEL_REVISION:-eeeeeee}\n"
            "text-generation-launcher --model-id o/tgi --revision $MODEL_REVISION\n"
            "vllm serve o/v --revision $(cat rev.txt) --tokenizer-revision main\n"
            'python -c "from huggingface_hub import snapshot_download; snapshot_download(\'o/py\', revision=\'${MODEL_REVISION}\')"\n')
    assert pins(text, "run.sh") == [
        (2, "o/a", None, "dynamic"),  # "$REV" is computed at run time: unknown, not a branch
        (4, "o/tgi", "eeeeeee", "commit"),
        (5, "o/v", None, "dynamic"),
        (5, "o/v", "main", "unpinned"),
        (6, "o/py", "eeeeeee", "commit"),
    ]


def test_env_file_and_requirements_url() -> None:
    assert pins("MODEL_ID=o/n\nMODEL_REVISION=fffffff\n", ".env") == [(1, "o/n", "fffffff", "commit")]
    assert pins("geneformer @ git+https://huggingface.co/o/n@8df5dc1\n", "requirements.txt") == [
        (1, "o/n", "8df5dc1", "commit")]


def test_kubernetes_env_list_read_by_the_container_script() -> None:
    text = ("spec:\n  containers:\n    - name: dl\n      args:\n        - |\n"
            '          hf download "$MODEL_NAME" --revision "$MODEL_REVISION"\n'
            f"      env:\n        - name: MODEL_NAME\n          value: o/n\n        - name: MODEL_REVISION\n"
            f"          value: {S}\n")
    assert pins(text, "k8s.yaml") == [(6, "o/n", S, "commit")]


def test_helm_values_flow_and_nested_mappings() -> None:
    text = "model: {name: o/flow, revision: 1111111}\nllm:\n  id: o/nested\n  revision: main\nembedder:\n  repo: o/e\n"
    assert pins(text, "values.yaml") == [(1, "o/flow", "1111111", "commit"), (3, "o/nested", "main", "unpinned"),
                                         (6, "o/e", None, "unpinned")]


def test_github_actions_env_reaches_run_steps() -> None:
    text = ("env:\n  HF_MODEL_ID: o/n\n  HF_MODEL_REVISION: 2222222\njobs:\n  t:\n    steps:\n"
            "      - run: huggingface-cli download $HF_MODEL_ID --revision ${{ env.HF_MODEL_REVISION }}\n"
            "      - run: hf download o/m --revision ${{ inputs.rev }}\n")
    assert pins(text, "ci.yml") == [(7, "o/n", "2222222", "commit"), (8, "o/m", None, "dynamic")]


def test_compose_command_and_environment() -> None:
    text = ("services:\n  tgi:\n    image: ghcr.io/huggingface/text-generation-inference:2.0\n"
            '    command: ["--model-id", "o/cmd", "--revision", "3333333"]\n'
            "    environment:\n      - MODEL_ID=o/env\n      - REVISION=4444444\n")
    assert sorted(pins(text, "compose.yaml")) == [(4, "o/cmd", "3333333", "commit"), (6, "o/env", "4444444", "commit")]


def test_a_revision_is_never_given_to_a_model_it_may_not_belong_to() -> None:
    text = "embedding_model: o/e\nreranker_model: o/r\nrevision: abcdef1\n"
    assert pins(text, "c.yaml") == [(1, "o/e", None, "unpinned"), (2, "o/r", None, "unpinned")]


def test_hostile_input_is_read_not_run(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    text = f'import os\nos.system("touch {marker}")\nAutoModel.from_pretrained("o/n", revision=__import__("os").getcwd())\n'
    assert pins(text, "x.py") == [(3, "o/n", None, "dynamic")]
    assert pins(f'RUN touch {marker} && hf download o/n --revision "$(touch {marker})"\n', "Dockerfile") == [
        (1, "o/n", None, "dynamic")]
    assert not marker.exists()
    deep = "X = " + "[" * 5000 + "]" * 5000 + "\n"
    assert scan_text(deep, "deep.py", "python")[0] == []  # too deep for ast: reported, not a crash
    assert pins("x=${" * 2000 + "\n", "deep.sh") == []
