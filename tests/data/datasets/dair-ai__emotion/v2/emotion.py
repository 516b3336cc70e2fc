# Stand-in for the upstream loading script emotion.py (its code is not recorded here; see ../SOURCE.md).
# hubwatch lists and stores a dataset's *.py files but never runs them.
