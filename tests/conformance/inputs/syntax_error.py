"""Not a module anyone can load: a syntax error on line 3."""

def mod_main(h, *args)
    pass
