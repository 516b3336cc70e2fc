"""`hubwatch check`: finds pinned revisions in a code base and asks the store or a server what affects them."""
