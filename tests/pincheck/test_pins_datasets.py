"""Dataset pins in every form real code writes them (issue 33): hf://datasets/ and huggingface.co/datasets/
URLs, `hf download --repo-type dataset`, training-config keys, variables, each reported as
`datasets/ORG/NAME` and never as the model of the same name."""

from __future__ import annotations

from hubwatch.pincheck.pins import _style_of, scan_text

S = "0123456789abcdef0123456789abcdef01234567"


def pins(text: str, name: str) -> list[tuple[int, str, str | None, str]]:
    """(line, name as the hub's URLs write it, revision, kind) per pin; every span holds its revision."""
    found, skipped = scan_text(text, name, _style_of(name) or "")
    assert skipped == []
    for pin in found:
        assert pin.span is None or text[pin.span[0]:pin.span[1]] == pin.revision, pin
    return sorted((p.line, p.name, p.revision, p.kind) for p in found)


def test_hf_dataset_paths_in_python() -> None:
    text = ("import pandas as pd\nimport polars as pl\n"
            f'train = pd.read_parquet("hf://datasets/o/sst@{S}/data/train.parquet")\n'
            'test = pl.read_parquet("hf://datasets/o/moving/data/*.parquet")\n'
            'con.sql("SELECT * FROM \'hf://datasets/o/duck@~parquet/default/train/*.parquet\'")\n'
            'x = "hf://datasets/o/enc@refs%2Fconvert%2Fparquet/default/train/0000.parquet"\n'
            'm = "hf://o/model@abcdef1/config.json"\n')
    assert pins(text, "load.py") == [
        (3, "datasets/o/sst", S, "commit"),
        (4, "datasets/o/moving", None, "unpinned"),  # no revision: a moving ref
        (5, "datasets/o/duck", "~parquet", "ref"),  # the parquet conversion branch moves
        (6, "datasets/o/enc", "refs/convert/parquet", "ref"),
        (7, "o/model", "abcdef1", "commit"),  # hf://ORG/NAME stays a model
    ]


def test_hub_dataset_urls_in_any_file_type() -> None:
    resolve = f"https://huggingface.co/datasets/o/d/resolve/{S}/data/train.jsonl"
    assert pins(f'URL = "{resolve}"\n', "fetch.py") == [(1, "datasets/o/d", S, "commit")]
    assert pins(f"curl -LO {resolve}\nwget https://huggingface.co/datasets/o/t/tree/v1.0\n", "get.sh") == [
        (1, "datasets/o/d", S, "commit"), (2, "datasets/o/t", "v1.0", "ref")]
    assert pins(f"data:\n  url: https://hf.co/datasets/o/b/blob/abcdef1/README.md\n", "c.yaml") == [
        (2, "datasets/o/b", "abcdef1", "commit")]
    assert pins(f"{resolve}\n", "requirements.txt") == [(1, "datasets/o/d", S, "commit")]
    assert pins(f'[data]\nurl = "{resolve}"\n', "c.toml") == [(2, "datasets/o/d", S, "commit")]
    # an f-string's constant parts
    assert pins(f'R = "{S}"\nu = f"https://huggingface.co/datasets/o/f/resolve/{{R}}/x.json"\n', "f.py") == [
        (2, "datasets/o/f", S, "commit")]


def test_links_to_a_dataset_page_or_a_space_pin_nothing() -> None:
    text = ('a = "https://huggingface.co/datasets/o/page"\nb = "https://huggingface.co/datasets"\n'
            'c = "hf://spaces/o/s@abcdef1"\nd = "https://huggingface.co/spaces/o/s/resolve/abcdef1/app.py"\n'
            'e = "hf://datasets/onlyone"\n')
    assert pins(text, "x.py") == []


def test_hub_cli_downloads_of_datasets() -> None:
    text = (f"huggingface-cli download o/a --repo-type dataset --revision {S} --local-dir data\n"
            "hf download o/b train.parquet --repo-type=dataset --revision abcdef1\n"
            "hf download --repo-type dataset o/c --include '*.json'\n"
            "hf download o/m --revision abcdef2\n"  # a model stays a model
            "hf download o/mm --repo-type model --revision abcdef3\n"
            "hf download o/s --repo-type space --revision abcdef4\n"  # a space: not a pin hubwatch reads
            "hf download ./local --repo-type dataset --revision abcdef5\n")  # a local path: not a repo
    assert pins(text, "fetch.sh") == [
        (1, "datasets/o/a", S, "commit"), (2, "datasets/o/b", "abcdef1", "commit"),
        (3, "datasets/o/c", None, "unpinned"), (4, "o/m", "abcdef2", "commit"), (5, "o/mm", "abcdef3", "commit")]


def test_dataset_revisions_through_shell_variables_and_dockerfile_args() -> None:
    shell = (f'DATASET_REPO="o/d"\nDATASET_REVISION="{S}"\nHF="${{HF_CLI:-hf}}"\n'
             '"$HF" download "$DATASET_REPO" --repo-type dataset --revision "$DATASET_REVISION" --local-dir x\n'
             'hf download o/e --repo-type dataset --revision "$1"\n')
    assert pins(shell, "run.sh") == [(4, "datasets/o/d", S, "commit"), (5, "datasets/o/e", None, "dynamic")]
    docker = (f"ARG DATA_REV={S}\nFROM python:3.12\nENV DATA_TYPE=dataset\n"
              "RUN hf download o/d --repo-type ${DATA_TYPE} --revision ${DATA_REV}\n"
              "RUN hf download o/x --repo-type ${UNSET_TYPE} --revision ${DATA_REV}\n"  # type unknown: skipped
              'CMD ["huggingface-cli", "download", "o/c", "--repo-type", "dataset", "--revision", "abcdef1"]\n'
              "RUN python -c \"from datasets import load_dataset; load_dataset('o/p', revision='abcdef2')\"\n")
    assert pins(docker, "Dockerfile") == [(4, "datasets/o/d", S, "commit"), (6, "datasets/o/c", "abcdef1", "commit"),
                                          (7, "datasets/o/p", "abcdef2", "commit")]


def test_ci_yaml_steps_download_datasets() -> None:
    text = ("env:\n  DS_REV: abcdef1\njobs:\n  eval:\n    steps:\n"
            "      - run: hf download o/d --repo-type dataset --revision $DS_REV\n"
            "      - run: |\n          huggingface-cli download o/m --revision abcdef2\n")
    assert pins(text, "ci.yml") == [(6, "datasets/o/d", "abcdef1", "commit"), (8, "o/m", "abcdef2", "commit")]


def test_training_config_yaml_keys() -> None:
    axolotl = ("base_model: o/model\ndatasets:\n  - path: tatsu-lab/alpaca\n    type: alpaca\n"
               f"    revision: {S}\n  - path: o/sub\n    name: en\n    split: train\n"
               "  - path: data/train.jsonl\n    ds_type: json\n  - path: ./local/folder\n"
               "test_datasets:\n  - path: o/test\n    revision: v2\n")
    assert pins(axolotl, "axolotl.yml") == [
        (1, "o/model", None, "unpinned"), (3, "datasets/tatsu-lab/alpaca", S, "commit"),
        (6, "datasets/o/sub", None, "unpinned"),  # `name:` is the config, not part of the id
        (13, "datasets/o/test", "v2", "ref")]
    trl = ("model_name_or_path: o/m\nmodel_revision: abcdef1\ndataset_name: trl-lib/Capybara\n"
           "dataset_config: default\ndataset_revision: abcdef2\n")
    assert pins(trl, "sft.yaml") == [(1, "o/m", "abcdef1", "commit"), (3, "datasets/trl-lib/Capybara", "abcdef2", "commit")]
    torchtune = (f"dataset:\n  _component_: torchtune.datasets.alpaca_dataset\n  source: yahma/alpaca-cleaned\n"
                 f"  revision: {S}\n  packed: false\n")
    assert pins(torchtune, "tune.yaml") == [(3, "datasets/yahma/alpaca-cleaned", S, "commit")]
    handbook = ("dataset_mixer:\n  HuggingFaceH4/ultrachat_200k: 1.0\n  data/mine: 0.5\n"
                "dataset_mixture:\n  datasets:\n    - id: o/mix\n      config: default\n      weight: 0.5\n")
    assert pins(handbook, "recipe.yaml") == [(2, "datasets/HuggingFaceH4/ultrachat_200k", None, "unpinned"),
                                             (6, "datasets/o/mix", None, "unpinned")]


def test_lm_eval_dataset_name_is_a_config_not_a_repo() -> None:
    task = ("task: gsm8k\ndataset_path: openai/gsm8k\ndataset_name: main/extra\n"
            "dataset_kwargs:\n  revision: abcdef1\noutput_type: generate_until\n")
    assert pins(task, "gsm8k.yaml") == [(2, "datasets/openai/gsm8k", "abcdef1", "commit")]
    assert pins("dataset_path: o/d\ndataset_name: en\n", "t.yaml") == [(1, "datasets/o/d", None, "unpinned")]


def test_a_model_key_is_not_a_dataset_key_and_a_model_keeps_its_revision() -> None:
    text = "model: o/m\nrevision: abcdef1\ndataset: o/d\n"
    # the bare revision is the model's (as before); the dataset beside a model takes only dataset_revision
    assert pins(text, "c.yaml") == [(1, "o/m", "abcdef1", "commit"), (3, "datasets/o/d", None, "unpinned")]
    assert pins("dataset: o/d\nrevision: abcdef1\n", "c.yaml") == [(1, "datasets/o/d", "abcdef1", "commit")]
    assert pins("model:\n  path: o/m\n  revision: abcdef1\n", "c.yaml") == []  # `path:` names a dataset only
    # under a dataset key
    assert pins("repo_id: o/d\nrepo_type: dataset\nrevision: abcdef1\n", "c.yaml") == [
        (1, "datasets/o/d", "abcdef1", "commit")]
    assert pins("repo_id: o/s\nrepo_type: space\nrevision: abcdef1\n", "c.yaml") == []


def test_a_dataset_key_holding_a_local_path_is_not_a_pin() -> None:
    text = ("dataset: ./data/train\ndataset_path: /mnt/data/x\ndataset_name: data/mine\n"
            "datasets:\n  - path: outputs/run1\n  - path: corpus/train.parquet\n  - path: ~/d/e\n"
            "dataset_mixer:\n  data/local: 1.0\n")
    assert pins(text, "c.yaml") == []
    assert pins('dataset = "data/train.jsonl"\n[[datasets]]\npath = "cache/x"\n', "c.toml") == []


def test_toml_dataset_keys() -> None:
    text = ('[train]\nmodel_name_or_path = "o/m"\nmodel_revision = "abcdef1"\ndataset_name = "o/ds"\n'
            f'dataset_revision = "{S}"\n\n[[datasets]]\npath = "o/axo"\nrevision = "abcdef3"\n\n'
            '[fetch]\nrepo_id = "o/d2"\nrepo_type = "dataset"\nrevision = "abcdef4"\n')
    assert pins(text, "c.toml") == [(2, "o/m", "abcdef1", "commit"), (4, "datasets/o/ds", S, "commit"),
                                    (8, "datasets/o/axo", "abcdef3", "commit"), (12, "datasets/o/d2", "abcdef4", "commit")]


def test_makefile_variables_reach_recipe_downloads() -> None:
    text = (f"DATASET ?= o/ds\nDATASET_REV := {S}\nMODEL_ID = o/m\nMODEL_REVISION = abcdef1\nHF := huggingface-cli\n\n"
            "data:\n\t@$(HF) download $(DATASET) --repo-type dataset \\\n\t\t--revision $(DATASET_REV) --local-dir d\n"
            "\thf download o/x --repo-type=dataset --revision $${REV:-abcdef9}\n"
            "\t-curl -LO https://huggingface.co/datasets/o/u/resolve/${DATASET_REV}/a.json\n"
            "\thf download o/y --repo-type dataset --revision $(shell cat REV)\n")
    assert pins(text, "Makefile") == [
        (3, "o/m", "abcdef1", "commit"),  # variables no recipe reads, paired by name as in Dockerfiles
        (8, "datasets/o/ds", S, "commit"), (10, "datasets/o/x", "abcdef9", "commit"),
        (11, "datasets/o/u", S, "commit"), (12, "datasets/o/y", None, "dynamic")]
    assert _style_of("Makefile") == _style_of("GNUmakefile") == _style_of("data.mk") == "make"


def test_f_string_dataset_paths_with_a_computed_revision() -> None:
    text = 'uri = f"hf://datasets/o/gdp@{catalog[\'rev\']}/{role}"\nR = "abcdef1"\nv = f"hf://datasets/o/k@{R}/x"\n'
    assert pins(text, "x.py") == [(1, "datasets/o/gdp", None, "dynamic"), (3, "datasets/o/k", "abcdef1", "commit")]


def test_python_dataset_constants_resolve_and_pair() -> None:
    text = (f'DATASET_ID = "o/d"\nDATASET_REVISION = "{S}"\nMODEL_ID = "o/m"\nREVISION = "abcdef1"\n'
            "def load():\n    return load_dataset(DATASET_ID, revision=DATASET_REVISION)\n")
    # the loader call reports the dataset (the constants' own pairing adds nothing); the model keeps REVISION
    assert pins(text, "a.py") == [(3, "o/m", "abcdef1", "commit"), (6, "datasets/o/d", S, "commit")]
    # constants no loader reads, as a module states its pins
    assert pins(f'DATASET_REPO = "o/d"\nDATASET_REVISION = "{S}"\n', "b.py") == [(1, "datasets/o/d", S, "commit")]
    # a revision two datasets could own is given to neither; a dataset named alone is no module pin
    assert pins(f'DATASET_REPO = "o/d"\nDATASET_NAME = "o/e"\nDATASET_REVISION = "{S}"\n', "c.py") == []
    assert pins('DATASET_ID = "o/d"\nDATASET_PATH = "data/train.jsonl"\n', "d.py") == []


def test_dataset_variables_no_command_reads_pair_by_name() -> None:
    docker = f"ARG DATASET_ID=o/d\nARG DATASET_REVISION={S}\nRUN python prepare.py\n"
    assert pins(docker, "Dockerfile") == [(1, "datasets/o/d", S, "commit")]
    read = f"ARG DATASET_ID=o/d\nARG DATASET_REVISION={S}\nRUN hf download $DATASET_ID --repo-type dataset --revision $DATASET_REVISION\n"
    assert pins(read, "Dockerfile") == [(3, "datasets/o/d", S, "commit")]  # the command's pin, once
    env = f"DATASET_NAME=o/d\nDATASET_REVISION={S}\nMODEL_ID=o/m\nMODEL_REVISION=abcdef1\n"
    assert pins(env, ".env") == [(1, "datasets/o/d", S, "commit"), (3, "o/m", "abcdef1", "commit")]
    assert pins("DATASET_NAME=o/d\nDATASET_PATH=data/x.jsonl\n", ".env") == []  # named alone: no pin
    k8s = (f"spec:\n  containers:\n    - name: x\n      env:\n        - name: DATASET_ID\n          value: o/d\n"
           f"        - name: DATASET_REVISION\n          value: {S}\n")
    assert pins(k8s, "deploy.yaml") == [(6, "datasets/o/d", S, "commit")]
    assert pins(f"DATASET_ID = o/d\nDATASET_REVISION = {S}\nall:\n\tpython x.py\n", "Makefile") == [
        (1, "datasets/o/d", S, "commit")]


def test_parameter_string_defaults_are_the_pin_a_bare_call_gets() -> None:
    text = ("class Env:\n"
            "    @classmethod\n"
            "    def load(cls, dataset_id: str = 'o/qa', dataset_revision: str = "
            f"'{S}', *, split: str = 'test') -> None:\n"
            "        return datasets.load_dataset(dataset_id, revision=dataset_revision, split=split)\n"
            "def fetch(repo='o/moving', rev=None):\n"
            "    return load_dataset(repo, revision=rev)\n"
            "def twice(name='o/a'):\n"
            "    return load_dataset(name)\n"
            "def again(name='o/b'):\n"
            "    return load_dataset(name)\n")
    assert pins(text, "env.py") == [
        (4, "datasets/o/qa", S, "commit"),  # the defaults a call passing nothing gets
        (6, "datasets/o/moving", None, "dynamic"),  # a None default: the caller decides the revision
    ]  # `name` is a parameter of two functions: neither default is known to be the one used


def test_a_parameter_with_a_default_that_is_reassigned_is_computed() -> None:
    text = (f"def load(repo='o/d', rev='{S}'):\n"
            "    rev = resolve(rev)\n"
            "    return load_dataset(repo, revision=rev)\n")
    assert pins(text, "x.py") == [(3, "datasets/o/d", None, "dynamic")]
