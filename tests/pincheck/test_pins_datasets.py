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
