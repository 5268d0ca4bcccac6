"""The lessons' own Python variants, one module per workload (LESSONS.md). Heavy packages
(numba, cupy) are imported in setup(), so listing the variants stays quick and a missing
package only skips the variants that need it."""
