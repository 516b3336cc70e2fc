"""
fetch_hf_datasets.py - Download HuggingFace datasets for debate-ai.
Saves each dataset as parquet + sample JSON + README.
"""
import os

BASE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA_RAW = os.path.join(BASE, "data", "raw")

# -- dataset definitions --
DATASETS = [
    {
        "name": "FEVER",
        "load_args": [
            {"path": "fever/fever", "name": "v1.0"},
            {"path": "fever/fever"},
            # Community mirrors / alternatives if official uses loading script
            {"path": "pietrolesci/fever"},
            {"path": "copenlu/fever_gold_evidence"},
        ],
        "dest": os.path.join(DATA_RAW, "fact_verification", "fever"),
    },
    {
        "name": "FEVEROUS",
        "load_args": [
            {"path": "fever/feverous"},
            # Try loading parquet directly from the HF hub if script-based loading fails
            {"path": "parquet", "data_files": "hf://datasets/fever/feverous@refs%2Fconvert%2Fparquet/default/train/0000.parquet"},
        ],
        "dest": os.path.join(DATA_RAW, "fact_verification", "feverous"),
    },
]


def main():
    from datasets import load_dataset, DatasetDict

    for entry in DATASETS:
        for args in entry["load_args"]:
            path = args["path"]
            config = args.get("name")
            data_files = args.get("data_files")
            if data_files:
                ds = load_dataset(path, data_files=data_files)
            elif config:
                ds = load_dataset(path, config)
            else:
                ds = load_dataset(path)
