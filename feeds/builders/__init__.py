"""Pure builders: domain values in, feeds / OSV responses / badges / plots / documents out."""
