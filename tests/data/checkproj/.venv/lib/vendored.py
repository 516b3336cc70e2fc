from_pretrained("ghost/in-venv", revision="1234567")
