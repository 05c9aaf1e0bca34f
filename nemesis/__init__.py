"""Fault injection: each nemesis package is one file with its fault, generator, heal step and plot shading."""
