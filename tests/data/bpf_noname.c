/* a BPF scheme without a tcp_congestion_ops name: refused at load */
int x;
