def oops(:
    from_pretrained("acme/in-broken-file", revision="5555555")
