// The GPU build of the MPI halo-exchange sample: the same source with device buffers, the
// program on two internal streams and each rank's own stream (see mpi_halo.cpp).
#define SDFC_MPI_HALO_GPU 1
#include "mpi_halo.cpp"
