"""Tracked repos: the watch list, poll outcomes, renames, the index page's and the feeds' reads."""
