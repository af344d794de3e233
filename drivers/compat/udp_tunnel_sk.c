// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/* UDP tunnel sockets are set up and released by their struct sock (7.x). */
#include <net/udp_tunnel.h>

void vhca_probe(struct net *net, struct socket *sock,
		struct udp_tunnel_sock_cfg *cfg);
void vhca_probe(struct net *net, struct socket *sock,
		struct udp_tunnel_sock_cfg *cfg)
{
	setup_udp_tunnel_sock(net, sock->sk, cfg);
	udp_tunnel_sock_release(sock->sk);
}
