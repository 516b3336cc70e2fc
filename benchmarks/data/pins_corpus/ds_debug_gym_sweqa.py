class SWEQAEnv:

    @classmethod
    def load_dataset(
        cls,
        dataset_id: str = "Raymone023/SWE-QA-Benchmark",
        dataset_revision: str = "7f8d77650ec5939a31b15b3256152f0275e7d6e3",
        problems: list | None = None,
        logger: DebugGymLogger | None = None,
        **kwargs,
    ) -> dict:
        ds = datasets.load_dataset(dataset_id, revision=dataset_revision)
        splits = list(ds.keys())  # Keep ordering.

        # Join all splits into one and use split name + idx as instance_id.
        all_data = []
        for split in splits:
            for i, item in enumerate(ds[split]):
                item["instance_id"] = f"{split}-{i}"
                all_data.append(item)
        ds = datasets.Dataset.from_list(all_data)
        return ds
