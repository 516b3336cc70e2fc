"""The shared vocabulary: typed, frozen values every room speaks (stdlib and PyYAML only)."""
