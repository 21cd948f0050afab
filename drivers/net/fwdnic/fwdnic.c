// SPDX-License-Identifier: GPL-2.0
/*
 * fwdnic: a software NIC with two ports, for measuring how a driver's TX
 * completion frees skbs, in IPv4 forwarding at the speed of the CPU.
 *
 * fwdnic0 receives a burst of frames from a template, the UDP single flow
 * of pktgen_sample03_burst_single_flow.sh (60 bytes: 198.18.0.1:9 to
 * 172.16.0.66:9), which the stack forwards out of fwdnic1.  With flows=2,
 * fwdnic1 receives a burst of the same length at the same time, the flow in
 * the opposite direction (172.16.0.66:9 to 198.18.0.1:9), which the stack
 * forwards out of fwdnic0: each port then receives one flow and completes
 * the other's TX, on its interrupt's CPU.  Each port has ixgbe's rings (512
 * RX and 512 TX descriptors) and NAPI poll:
 *
 *  - RX "DMA" copies the template into a buffer of the RX ring, a page
 *    fragment, and the poll builds the skb around it with napi_build_skb(),
 *    as ixgbe does by default (ixgbe_build_skb(); napi_alloc_skb() is its
 *    legacy-rx mode), and hands it to napi_gro_receive(), with GRO off;
 *    every frame of a burst must come out, so RX is a closed loop: it
 *    delivers nothing while FWDNIC_RX_IN_FLIGHT frames of its flow are not
 *    completed by the other port (where a router would drop them), unless
 *    that port is down or has completed nothing for FWDNIC_RX_HOLD_MAX;
 *  - ndo_start_xmit() places the skb on the TX ring, and the TX interrupt
 *    is moderated: while a burst arrives it is raised once tx_coalesce
 *    descriptors wait (ixgbe's adaptive moderation spaces interrupts
 *    10-126 us apart, 20-252 packets at 2 Mpps), at once otherwise;
 *  - the poll cleans the TX ring in ixgbe_clean_tx_irq()'s shape: every
 *    descriptor up to the tail is complete (there is no wire to wait for),
 *    at most 256 per poll, skbs freed in ring order through the free path
 *    that tx_free selects, read once per cleanup:
 *      shim       the ixgbe bulk-free shim's batch of 32 (include/net/ixgbe_bulk_shim.h);
 *      napi       napi_consume_skb() per skb, what ixgbe does today;
 *      any        dev_consume_skb_any() per skb, what ixgbe did before 2015's bulk free;
 *      slab-bulk  the 2015 RFC's mechanism without the NAPI skb cache: the
 *                 cleanup's skbs linked through skb->next and given to
 *                 kfree_skb_list_reason(), which releases each one and frees
 *                 the heads with one kmem_cache_free_bulk() per 16.
 *
 * So skbs stay in flight on the TX ring as on a NIC, and their heads go
 * back to slabs other than the CPU's current one.  rx_cpu and tx_cpu route
 * each port's interrupt to a CPU (an IPI raising the NAPI poll there), so
 * that RX and TX completion can run on different CPUs; they can be changed
 * between bursts, as an interrupt's smp_affinity can.  A TX port whose
 * interrupt has a CPU of its own polls while a burst lasts instead of taking
 * an IPI per tx_coalesce descriptors (fwdnic_tx_polling()).
 *
 * Control, in debugfs (fwdnic/): writing N to "run" sends a burst of N
 * frames into fwdnic0 (and N into fwdnic1 with flows=2) and returns once the
 * ports have completed as many frames, or once nothing has moved for a
 * second; reading "run" then gives what the last run did, one line of
 * key=value pairs.  Both ports must be up, with forwarding set up
 * (ip_forward, a route and a neighbour for 172.16.0.66 on fwdnic1, and with
 * flows=2 one for 198.18.0.1 on fwdnic0).
 */

#include <linux/atomic.h>
#include <linux/completion.h>
#include <linux/debugfs.h>
#include <linux/etherdevice.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/jiffies.h>
#include <linux/kstrtox.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/netdevice.h>
#include <linux/skbuff.h>
#include <linux/smp.h>
#include <linux/u64_stats_sync.h>
#include <linux/udp.h>
#include <net/checksum.h>
#include <net/ixgbe_bulk_shim.h>

#define FWDNIC_PORTS		2
#define FWDNIC_RING_SIZE	512	/* ixgbe's default RX and TX descriptors */
#define FWDNIC_RING_MASK	(FWDNIC_RING_SIZE - 1)
#define FWDNIC_TX_WORK		256	/* ixgbe's TX work limit per poll */
#define FWDNIC_TX_WAKE		32	/* free descriptors to wake the queue */
/*
 * Frames of a port's flow that may be on their way to the other port's TX
 * completion (in the stack, the qdisc and the TX ring) before its RX waits:
 * above a ring and the default qdisc of 1000, which one CPU never fills, and
 * far below the longest qdisc, so that a TX completion that falls behind on
 * another CPU holds the burst back instead of overflowing the qdisc.
 */
#define FWDNIC_RX_IN_FLIGHT	2048
/* The longest RX waits for the other port to complete anything. */
#define FWDNIC_RX_HOLD_MAX	(HZ / 10)

#define FWDNIC_FRAME_LEN	60	/* pktgen's 60-byte packets, no FCS */
#define FWDNIC_HEADROOM		(NET_SKB_PAD + NET_IP_ALIGN)
#define FWDNIC_TRUESIZE		(SKB_DATA_ALIGN(FWDNIC_HEADROOM + FWDNIC_FRAME_LEN) + \
				 SKB_DATA_ALIGN(sizeof(struct skb_shared_info)))

enum fwdnic_free {
	FWDNIC_FREE_SHIM,
	FWDNIC_FREE_NAPI,
	FWDNIC_FREE_ANY,
	FWDNIC_FREE_SLAB_BULK,
};

static const char * const fwdnic_free_names[] = {
	[FWDNIC_FREE_SHIM] = "shim",
	[FWDNIC_FREE_NAPI] = "napi",
	[FWDNIC_FREE_ANY] = "any",
	[FWDNIC_FREE_SLAB_BULK] = "slab-bulk",
};

static int fwdnic_tx_free = FWDNIC_FREE_SHIM;
static unsigned int tx_coalesce = 128;
/* 1: a flow into fwdnic0; 2: a second one into fwdnic1, the other way. */
static unsigned int flows = 1;
/* The CPUs of the ports' interrupts, -1 for the CPU that raises it. */
static int fwdnic_irq_cpu[FWDNIC_PORTS] = { -1, -1 };

struct fwdnic_port {
	struct net_device *dev;
	struct napi_struct napi;
	/* The port's interrupt: bit 0 set from raising it to the end of the poll. */
	unsigned long irq_masked;
	int index;		/* into fwdnic_irq_cpu */
	call_single_data_t irq_csd;

	/* RX ring: a page fragment per descriptor, owned by the NAPI poll. */
	void *rx_buf[FWDNIC_RING_SIZE];
	unsigned int rx_next;
	/* Frames of the burst still to arrive; written by the poll while nonzero. */
	unsigned long rx_left;
	/* The 60 bytes RX "DMA" writes, addressed to this port. */
	u8 frame[FWDNIC_FRAME_LEN];

	/*
	 * TX ring: ndo_start_xmit() fills it under the queue's xmit lock and
	 * publishes tx_tail; the NAPI poll empties it and publishes
	 * tx_next_to_clean.  Both count up and wrap; the slot is the index
	 * masked by FWDNIC_RING_MASK.
	 */
	struct sk_buff *tx_skb[FWDNIC_RING_SIZE];
	unsigned int tx_tail;
	unsigned int tx_next_to_clean;

	struct u64_stats_sync syncp;
	u64_stats_t rx_packets, rx_bytes, rx_dropped;
	u64_stats_t tx_packets, tx_bytes;

	/*
	 * Frames this port handed to the stack and frames it completed, each
	 * written by its poll only (the other port's RX reads tx_done), and
	 * their difference at the start of the burst (frames the stack dropped
	 * or the port sent of its own before): see fwdnic_rx_held().
	 */
	unsigned long rx_delivered;
	unsigned long tx_done;
	long rx_flight_base;
	/* While RX is held: since when (0: not held), and tx_done then. */
	unsigned long rx_held_since;
	unsigned long rx_held_done;
};

/* A burst sent into port 0 and what came out of port 1. */
struct fwdnic_run {
	u64 packets;		/* frames asked for */
	u64 forwarded;		/* frames the ports completed */
	u64 ns;			/* from the start to the last completion */
	unsigned int flows;	/* flows at the start */
	int free_path;		/* tx_free at the start */
	bool complete;		/* every frame came out */
};

static struct fwdnic {
	struct fwdnic_port *port[FWDNIC_PORTS];
	struct dentry *debugfs;

	/* Set while a run counts the ports' TX completions. */
	bool counting;
	atomic64_t forwarded;
	u64 target;
	u64 start_ns, end_ns;
	struct completion run_done;
	struct mutex run_lock;	/* one run at a time; protects last */
	struct fwdnic_run last;
} fwdnic;

static unsigned int fwdnic_tx_unused(const struct fwdnic_port *port)
{
	/* Pairs with the release in fwdnic_clean_tx(): the slots are empty. */
	unsigned int clean = smp_load_acquire(&port->tx_next_to_clean);

	return FWDNIC_RING_SIZE - (port->tx_tail - clean);
}

static bool fwdnic_bursting(void)
{
	int i;

	for (i = 0; i < FWDNIC_PORTS; i++)
		if (READ_ONCE(fwdnic.port[i]->rx_left))
			return true;
	return false;
}

static void fwdnic_irq_handler(void *data)
{
	struct fwdnic_port *port = data;

	napi_schedule(&port->napi);
}

/* Raises the port's interrupt, unless it is masked (its poll is pending). */
static void fwdnic_irq(struct fwdnic_port *port)
{
	int cpu = READ_ONCE(fwdnic_irq_cpu[port->index]);

	if (test_and_set_bit(0, &port->irq_masked))
		return;
	/* A CPU that went offline takes no IPI: the poll then runs here. */
	if (cpu < 0 || cpu == raw_smp_processor_id() ||
	    smp_call_function_single_async(cpu, &port->irq_csd))
		napi_schedule(&port->napi);
}

/*
 * Whether the port has work that raises its interrupt: frames of a burst to
 * receive, or TX descriptors to clean (tx_coalesce of them during a burst).
 */
static bool fwdnic_work_waiting(struct fwdnic_port *port)
{
	unsigned int pending = READ_ONCE(port->tx_tail) - port->tx_next_to_clean;

	if (READ_ONCE(port->rx_left))
		return true;
	return pending && (pending >= READ_ONCE(tx_coalesce) || !fwdnic_bursting());
}

/* Ends the poll: unmasks the interrupt and raises it again if work is waiting. */
static void fwdnic_irq_unmask(struct fwdnic_port *port)
{
	clear_bit(0, &port->irq_masked);
	/* Orders the unmask before the reads of fwdnic_work_waiting(). */
	smp_mb__after_atomic();
	if (fwdnic_work_waiting(port))
		fwdnic_irq(port);
}

/*
 * Frees the skb of a completed TX descriptor through the selected path, or,
 * for slab-bulk, links it at @end, the end of a list in ring order that the
 * caller frees once the cleanup loop ends.
 */
static __always_inline void fwdnic_free_skb(struct ixgbe_bulk_shim *done,
					    struct sk_buff ***end, int how,
					    struct sk_buff *skb, int napi_budget)
{
	switch (how) {
	case FWDNIC_FREE_SHIM:
		ixgbe_bulk_shim_add(done, skb);
		break;
	case FWDNIC_FREE_NAPI:
		napi_consume_skb(skb, napi_budget);
		break;
	case FWDNIC_FREE_SLAB_BULK:
		**end = skb;
		*end = &skb->next;
		break;
	default:
		dev_consume_skb_any(skb);
		break;
	}
}

/* The TX cleanup, in ixgbe_clean_tx_irq()'s shape; true if the ring is clean. */
static bool fwdnic_clean_tx(struct fwdnic_port *port, int napi_budget)
{
	struct ixgbe_bulk_shim done __uninitialized;
	struct sk_buff *list = NULL, **list_end = &list;
	int how = READ_ONCE(fwdnic_tx_free);
	unsigned int i = port->tx_next_to_clean;
	/* Pairs with the release in fwdnic_xmit(): the skbs up to here are stored. */
	unsigned int tail = smp_load_acquire(&port->tx_tail);
	unsigned int budget = FWDNIC_TX_WORK;
	unsigned int packets = 0, bytes = 0;

	if (how == FWDNIC_FREE_SHIM)
		ixgbe_bulk_shim_init(&done, napi_budget);
	while (i != tail && budget) {
		struct sk_buff *skb = port->tx_skb[i & FWDNIC_RING_MASK];

		port->tx_skb[i & FWDNIC_RING_MASK] = NULL;
		bytes += skb->len;
		packets++;
		fwdnic_free_skb(&done, &list_end, how, skb, napi_budget);
		i++;
		budget--;
	}
	if (how == FWDNIC_FREE_SHIM)
		ixgbe_bulk_shim_flush(&done);
	/* kfree_skb_list_reason() bulk-frees, which needs IRQs enabled, as here. */
	if (list) {
		*list_end = NULL;
		kfree_skb_list_reason(list, SKB_CONSUMED);
	}
	/* Pairs with the acquire in fwdnic_tx_unused(): the slots are empty. */
	smp_store_release(&port->tx_next_to_clean, i);

	u64_stats_update_begin(&port->syncp);
	u64_stats_add(&port->tx_packets, packets);
	u64_stats_add(&port->tx_bytes, bytes);
	u64_stats_update_end(&port->syncp);
	WRITE_ONCE(port->tx_done, port->tx_done + packets);

	/* Pairs with the release in fwdnic_run(): target is set. */
	if (packets && smp_load_acquire(&fwdnic.counting) &&
	    atomic64_add_return(packets, &fwdnic.forwarded) >= fwdnic.target) {
		WRITE_ONCE(fwdnic.counting, false);
		fwdnic.end_ns = ktime_get_ns();
		complete(&fwdnic.run_done);
	}

	/* As ixgbe: wake the queue once enough descriptors are free. */
	if (unlikely(packets && netif_carrier_ok(port->dev) &&
		     fwdnic_tx_unused(port) >= FWDNIC_TX_WAKE)) {
		/* Pairs with the barrier in fwdnic_xmit() after stopping the queue. */
		smp_mb();
		if (netif_queue_stopped(port->dev))
			netif_wake_queue(port->dev);
	}
	return !!budget;
}

/* The frames of @port's flow handed to the stack and not completed yet. */
static long fwdnic_rx_in_flight(const struct fwdnic_port *port)
{
	return (long)(READ_ONCE(port->rx_delivered) -
		      READ_ONCE(fwdnic.port[!port->index]->tx_done));
}

/*
 * Flow control: each port's flow leaves through the other port.  While
 * FWDNIC_RX_IN_FLIGHT of the burst's frames are not completed there, nothing
 * arrives; the poll is repeated until they are.  Frames that never will be
 * (the other port is down, or the stack dropped them) must not hold the
 * burst: with the other port down nothing is held, and once the other port
 * has completed nothing for FWDNIC_RX_HOLD_MAX, what is still counted in
 * flight is taken as lost and the count starts again from there.
 */
static bool fwdnic_rx_held(struct fwdnic_port *port)
{
	struct fwdnic_port *out = fwdnic.port[!port->index];
	unsigned long done = READ_ONCE(out->tx_done);
	long flight = fwdnic_rx_in_flight(port) - port->rx_flight_base;

	if (flight < FWDNIC_RX_IN_FLIGHT || !netif_running(out->dev)) {
		port->rx_held_since = 0;
		return false;
	}
	if (!port->rx_held_since || done != port->rx_held_done) {
		port->rx_held_since = jiffies | 1;
		port->rx_held_done = done;
		return true;
	}
	if (time_before(jiffies, port->rx_held_since + FWDNIC_RX_HOLD_MAX))
		return true;
	port->rx_flight_base += flight;
	port->rx_held_since = 0;
	return false;
}

/* RX "DMA" and the RX cleanup: up to @budget frames of the burst to the stack. */
static int fwdnic_clean_rx(struct fwdnic_port *port, int budget)
{
	unsigned long left = READ_ONCE(port->rx_left);
	unsigned int bytes = 0, dropped = 0;
	int done = 0, n;

	if (!left)
		return 0;
	if (fwdnic_rx_held(port))
		return 0;
	/*
	 * The frames of this poll are taken from the burst before they reach
	 * the stack, so that the transmit of the burst's last frames sees it
	 * over and raises the TX interrupt at once.
	 */
	n = min_t(unsigned long, budget, left);
	WRITE_ONCE(port->rx_left, left - n);
	while (done < n) {
		unsigned int i = port->rx_next & FWDNIC_RING_MASK;
		void *buf = port->rx_buf[i];
		struct sk_buff *skb;

		/* Refill the descriptor, as ixgbe_alloc_rx_buffers() does. */
		port->rx_buf[i] = napi_alloc_frag(FWDNIC_TRUESIZE);
		port->rx_next++;
		done++;
		if (unlikely(!buf))
			goto drop;
		memcpy(buf + FWDNIC_HEADROOM, port->frame, FWDNIC_FRAME_LEN);
		skb = napi_build_skb(buf, FWDNIC_TRUESIZE);
		if (unlikely(!skb)) {
			skb_free_frag(buf);
			goto drop;
		}
		skb_reserve(skb, FWDNIC_HEADROOM);
		__skb_put(skb, FWDNIC_FRAME_LEN);
		skb->protocol = eth_type_trans(skb, port->dev);
		bytes += FWDNIC_FRAME_LEN;
		napi_gro_receive(&port->napi, skb);
		continue;
drop:
		dropped++;
	}

	u64_stats_update_begin(&port->syncp);
	u64_stats_add(&port->rx_packets, done - dropped);
	u64_stats_add(&port->rx_bytes, bytes);
	u64_stats_add(&port->rx_dropped, dropped);
	u64_stats_update_end(&port->syncp);
	WRITE_ONCE(port->rx_delivered, port->rx_delivered + done - dropped);
	return done;
}

/*
 * Whether the port stays in polling mode: while a burst lasts, if its
 * interrupt has a CPU of its own (not the other port's).  Its poll then
 * cleans TX once tx_coalesce descriptors wait, as its moderated interrupt
 * would, without the IPI per interrupt, which costs more than the cleanup it
 * starts (in UML, where an IPI is a host signal, 2-CPU forwarding fell to a
 * twenty-fifth of the 1-CPU rate and the qdisc dropped frames).
 */
static bool fwdnic_tx_polling(const struct fwdnic_port *port)
{
	int cpu = READ_ONCE(fwdnic_irq_cpu[port->index]);

	return cpu >= 0 && cpu != READ_ONCE(fwdnic_irq_cpu[!port->index]) &&
	       fwdnic_bursting();
}

/* The NAPI poll, in ixgbe_poll()'s shape: TX cleanup, then RX. */
static int fwdnic_poll(struct napi_struct *napi, int budget)
{
	struct fwdnic_port *port = container_of(napi, struct fwdnic_port, napi);
	bool clean;
	int work;

	/*
	 * In polling mode, clean TX once tx_coalesce descriptors wait; a port
	 * that receives a flow goes on to its RX meanwhile.
	 */
	if (budget > 0 && fwdnic_tx_polling(port) &&
	    READ_ONCE(port->tx_tail) - port->tx_next_to_clean < READ_ONCE(tx_coalesce)) {
		if (!READ_ONCE(port->rx_left))
			return budget;
		clean = true;
	} else {
		clean = fwdnic_clean_tx(port, budget);
	}
	if (budget <= 0)	/* netpoll */
		return budget;
	work = fwdnic_clean_rx(port, budget);
	if (!clean || work >= budget)
		return budget;
	if (fwdnic_tx_polling(port))
		return budget;
	if (napi_complete_done(napi, work))
		fwdnic_irq_unmask(port);
	return min(work, budget - 1);
}

static netdev_tx_t fwdnic_xmit(struct sk_buff *skb, struct net_device *dev)
{
	struct fwdnic_port *port = netdev_priv(dev);
	unsigned int tail = port->tx_tail, pending;

	if (unlikely(!fwdnic_tx_unused(port))) {
		netif_stop_queue(dev);
		return NETDEV_TX_BUSY;
	}
	port->tx_skb[tail & FWDNIC_RING_MASK] = skb;
	/* Pairs with the acquire in fwdnic_clean_tx(). */
	smp_store_release(&port->tx_tail, tail + 1);

	if (unlikely(!fwdnic_tx_unused(port))) {
		netif_stop_queue(dev);
		/* Pairs with the barrier in fwdnic_clean_tx() before waking. */
		smp_mb();
		if (fwdnic_tx_unused(port) >= FWDNIC_TX_WAKE)
			netif_start_queue(dev);
	}

	pending = tail + 1 - READ_ONCE(port->tx_next_to_clean);
	if (pending >= READ_ONCE(tx_coalesce) || !fwdnic_bursting())
		fwdnic_irq(port);
	return NETDEV_TX_OK;
}

/*
 * The frame RX "DMA" writes into @port: pktgen's UDP single flow, into
 * fwdnic0 from 198.18.0.1 to 172.16.0.66, into fwdnic1 the other way.
 */
static void fwdnic_build_frame(struct fwdnic_port *port)
{
	struct ethhdr *eth = (struct ethhdr *)port->frame;
	struct iphdr *ip = (struct iphdr *)(eth + 1);
	struct udphdr *udp = (struct udphdr *)(ip + 1);
	static const u8 src_mac[ETH_ALEN] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x01 };
	__be32 near = htonl(0xc6120001), far = htonl(0xac100042);

	memset(port->frame, 0, sizeof(port->frame));
	ether_addr_copy(eth->h_dest, port->dev->dev_addr);
	ether_addr_copy(eth->h_source, src_mac);
	eth->h_proto = htons(ETH_P_IP);
	ip->version = 4;
	ip->ihl = 5;
	ip->tot_len = htons(FWDNIC_FRAME_LEN - ETH_HLEN);
	ip->ttl = 32;
	ip->protocol = IPPROTO_UDP;
	/* 198.18.0.1 and 172.16.0.66 */
	ip->saddr = port->index ? far : near;
	ip->daddr = port->index ? near : far;
	ip->check = ip_fast_csum(ip, ip->ihl);
	udp->source = htons(9);
	udp->dest = htons(9);
	udp->len = htons(FWDNIC_FRAME_LEN - ETH_HLEN - sizeof(*ip));
}

static void fwdnic_free_rx_ring(struct fwdnic_port *port)
{
	unsigned int i;

	for (i = 0; i < FWDNIC_RING_SIZE; i++) {
		if (port->rx_buf[i])
			skb_free_frag(port->rx_buf[i]);
		port->rx_buf[i] = NULL;
	}
}

static int fwdnic_open(struct net_device *dev)
{
	struct fwdnic_port *port = netdev_priv(dev);
	unsigned int i;

	for (i = 0; i < FWDNIC_RING_SIZE; i++) {
		port->rx_buf[i] = netdev_alloc_frag(FWDNIC_TRUESIZE);
		if (!port->rx_buf[i]) {
			fwdnic_free_rx_ring(port);
			return -ENOMEM;
		}
	}
	fwdnic_build_frame(port);
	port->rx_next = 0;
	port->tx_tail = 0;
	port->tx_next_to_clean = 0;
	port->irq_masked = 0;
	napi_enable(&port->napi);
	netif_carrier_on(dev);
	netif_start_queue(dev);
	return 0;
}

static int fwdnic_stop(struct net_device *dev)
{
	struct fwdnic_port *port = netdev_priv(dev);
	unsigned int i;

	netif_carrier_off(dev);
	netif_tx_disable(dev);
	napi_disable(&port->napi);
	/* A burst into a port that is down ends here. */
	WRITE_ONCE(port->rx_left, 0);
	/* As ixgbe_clean_tx_ring(): what the hardware did not send is freed. */
	for (i = port->tx_next_to_clean; i != port->tx_tail; i++) {
		dev_kfree_skb_any(port->tx_skb[i & FWDNIC_RING_MASK]);
		port->tx_skb[i & FWDNIC_RING_MASK] = NULL;
	}
	port->tx_next_to_clean = port->tx_tail;
	fwdnic_free_rx_ring(port);
	return 0;
}

static void fwdnic_get_stats64(struct net_device *dev,
			       struct rtnl_link_stats64 *stats)
{
	struct fwdnic_port *port = netdev_priv(dev);
	unsigned int start;

	do {
		start = u64_stats_fetch_begin(&port->syncp);
		stats->rx_packets = u64_stats_read(&port->rx_packets);
		stats->rx_bytes = u64_stats_read(&port->rx_bytes);
		stats->rx_dropped = u64_stats_read(&port->rx_dropped);
		stats->tx_packets = u64_stats_read(&port->tx_packets);
		stats->tx_bytes = u64_stats_read(&port->tx_bytes);
	} while (u64_stats_fetch_retry(&port->syncp, start));
}

static const struct net_device_ops fwdnic_netdev_ops = {
	.ndo_open		= fwdnic_open,
	.ndo_stop		= fwdnic_stop,
	.ndo_start_xmit		= fwdnic_xmit,
	.ndo_get_stats64	= fwdnic_get_stats64,
	.ndo_set_mac_address	= eth_mac_addr,
	.ndo_validate_addr	= eth_validate_addr,
};

/*
 * Sends a burst of @packets into port 0, and with flows=2 as many into port 1;
 * the caller holds run_lock.
 */
static int fwdnic_run(u64 packets)
{
	unsigned int i, n = READ_ONCE(flows);
	struct fwdnic_run *r = &fwdnic.last;
	s64 seen = -1, now;
	long wait;

	for (i = 0; i < FWDNIC_PORTS; i++)
		if (!netif_running(fwdnic.port[i]->dev))
			return -ENETDOWN;
	if (fwdnic_bursting())
		return -EBUSY;
	*r = (struct fwdnic_run){ .packets = packets, .flows = n,
				  .free_path = READ_ONCE(fwdnic_tx_free) };
	atomic64_set(&fwdnic.forwarded, 0);
	fwdnic.target = packets * n;
	reinit_completion(&fwdnic.run_done);
	fwdnic.start_ns = ktime_get_ns();
	fwdnic.end_ns = fwdnic.start_ns;
	/* Pairs with the acquire in fwdnic_clean_tx(): target is set. */
	smp_store_release(&fwdnic.counting, true);
	/* The polls read rx_flight_base after the interrupt below raises them. */
	for (i = 0; i < n; i++) {
		fwdnic.port[i]->rx_flight_base = fwdnic_rx_in_flight(fwdnic.port[i]);
		fwdnic.port[i]->rx_held_since = 0;
		WRITE_ONCE(fwdnic.port[i]->rx_left, packets);
	}
	local_bh_disable();
	for (i = 0; i < n; i++)
		fwdnic_irq(fwdnic.port[i]);
	local_bh_enable();

	/* Until every frame is out, or nothing moved for a second. */
	for (;;) {
		wait = wait_for_completion_killable_timeout(&fwdnic.run_done, HZ);
		if (wait)
			break;
		now = atomic64_read(&fwdnic.forwarded);
		if (now == seen && !fwdnic_bursting())
			break;
		seen = now;
	}
	if (wait <= 0) {
		WRITE_ONCE(fwdnic.counting, false);
		fwdnic.end_ns = ktime_get_ns();
	}
	r->forwarded = atomic64_read(&fwdnic.forwarded);
	r->complete = wait > 0;
	r->ns = fwdnic.end_ns - fwdnic.start_ns;
	return wait < 0 ? wait : 0;
}

static ssize_t fwdnic_run_write(struct file *file, const char __user *buf,
				size_t count, loff_t *ppos)
{
	u64 packets;
	int err;

	err = kstrtou64_from_user(buf, count, 0, &packets);
	if (err)
		return err;
	if (!packets)
		return -EINVAL;
	mutex_lock(&fwdnic.run_lock);
	err = fwdnic_run(packets);
	mutex_unlock(&fwdnic.run_lock);
	return err ? err : count;
}

static ssize_t fwdnic_run_read(struct file *file, char __user *buf,
			       size_t count, loff_t *ppos)
{
	struct fwdnic_run r;
	char line[160];
	int len;

	mutex_lock(&fwdnic.run_lock);
	r = fwdnic.last;
	mutex_unlock(&fwdnic.run_lock);
	len = scnprintf(line, sizeof(line),
			"packets=%llu forwarded=%llu ns=%llu flows=%u free=%s complete=%d\n",
			r.packets, r.forwarded, r.ns, r.flows,
			fwdnic_free_names[r.free_path], r.complete);
	return simple_read_from_buffer(buf, count, ppos, line, len);
}

static const struct file_operations fwdnic_run_fops = {
	.owner	= THIS_MODULE,
	.open	= simple_open,
	.read	= fwdnic_run_read,
	.write	= fwdnic_run_write,
	.llseek	= default_llseek,
};

static int fwdnic_tx_free_set(const char *val, const struct kernel_param *kp)
{
	int i = sysfs_match_string(fwdnic_free_names, val);

	if (i < 0)
		return i;
	WRITE_ONCE(fwdnic_tx_free, i);
	return 0;
}

static int fwdnic_tx_free_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%s\n", fwdnic_free_names[READ_ONCE(fwdnic_tx_free)]);
}

static const struct kernel_param_ops fwdnic_tx_free_ops = {
	.set = fwdnic_tx_free_set,
	.get = fwdnic_tx_free_get,
};

module_param_cb(tx_free, &fwdnic_tx_free_ops, NULL, 0644);
MODULE_PARM_DESC(tx_free, "TX completion frees skbs by: shim (default), napi, any or slab-bulk");
/* Sets the unsigned int at kp->arg to @val, which must be from @min to @max. */
static int fwdnic_set_uint(const char *val, const struct kernel_param *kp,
			   unsigned int min, unsigned int max)
{
	unsigned int n;
	int err = kstrtouint(val, 0, &n);

	if (err)
		return err;
	if (n < min || n > max)
		return -EINVAL;
	WRITE_ONCE(*(unsigned int *)kp->arg, n);
	return 0;
}

/* Between bursts, as ixgbe's interrupt moderation can be changed with ethtool -C. */
static int fwdnic_tx_coalesce_set(const char *val, const struct kernel_param *kp)
{
	return fwdnic_set_uint(val, kp, 1, FWDNIC_RING_SIZE);
}

static const struct kernel_param_ops fwdnic_tx_coalesce_ops = {
	.set = fwdnic_tx_coalesce_set,
	.get = param_get_uint,
};

module_param_cb(tx_coalesce, &fwdnic_tx_coalesce_ops, &tx_coalesce, 0644);
MODULE_PARM_DESC(tx_coalesce, "TX descriptors per TX interrupt during a burst (1-512, 128)");

/* Read at the start of each run. */
static int fwdnic_flows_set(const char *val, const struct kernel_param *kp)
{
	return fwdnic_set_uint(val, kp, 1, FWDNIC_PORTS);
}

static const struct kernel_param_ops fwdnic_flows_ops = {
	.set = fwdnic_flows_set,
	.get = param_get_uint,
};

module_param_cb(flows, &fwdnic_flows_ops, &flows, 0644);
MODULE_PARM_DESC(flows, "1: a flow into fwdnic0 (default); 2: one more into fwdnic1, the other way");

/* An interrupt's CPU, as its smp_affinity: -1 (the raising CPU) or an online CPU. */
static int fwdnic_cpu_set(const char *val, const struct kernel_param *kp)
{
	int cpu, err = kstrtoint(val, 0, &cpu);

	if (err)
		return err;
	if (cpu < -1 || (cpu >= 0 && (cpu >= nr_cpu_ids || !cpu_online(cpu))))
		return -EINVAL;
	WRITE_ONCE(*(int *)kp->arg, cpu);
	return 0;
}

static const struct kernel_param_ops fwdnic_cpu_ops = {
	.set = fwdnic_cpu_set,
	.get = param_get_int,
};

module_param_cb(rx_cpu, &fwdnic_cpu_ops, &fwdnic_irq_cpu[0], 0644);
MODULE_PARM_DESC(rx_cpu, "CPU of fwdnic0's interrupt (-1, default: the CPU that raises it)");
module_param_cb(tx_cpu, &fwdnic_cpu_ops, &fwdnic_irq_cpu[1], 0644);
MODULE_PARM_DESC(tx_cpu, "CPU of fwdnic1's interrupt (-1, default: the CPU that raises it)");

static void fwdnic_destroy(void)
{
	int i;

	for (i = 0; i < FWDNIC_PORTS; i++) {
		if (fwdnic.port[i]) {
			netif_napi_del(&fwdnic.port[i]->napi);
			free_netdev(fwdnic.port[i]->dev);
			fwdnic.port[i] = NULL;
		}
	}
}

static int __init fwdnic_init(void)
{
	struct net_device *dev;
	int i, err;

	mutex_init(&fwdnic.run_lock);
	init_completion(&fwdnic.run_done);

	for (i = 0; i < FWDNIC_PORTS; i++) {
		struct fwdnic_port *port;

		dev = alloc_etherdev(sizeof(*port));
		if (!dev) {
			err = -ENOMEM;
			goto err_destroy;
		}
		snprintf(dev->name, IFNAMSIZ, "fwdnic%d", i);
		dev->netdev_ops = &fwdnic_netdev_ops;
		eth_hw_addr_random(dev);
		port = netdev_priv(dev);
		port->dev = dev;
		port->index = i;
		INIT_CSD(&port->irq_csd, fwdnic_irq_handler, port);
		u64_stats_init(&port->syncp);
		netif_napi_add(dev, &port->napi, fwdnic_poll);
		fwdnic.port[i] = port;
	}

	for (i = 0; i < FWDNIC_PORTS; i++) {
		err = register_netdev(fwdnic.port[i]->dev);
		if (err)
			goto err_unregister;
		/* GRO off, as in 2015 (ethtool -K gro off). */
		rtnl_lock();
		fwdnic.port[i]->dev->wanted_features &= ~NETIF_F_GRO;
		netdev_update_features(fwdnic.port[i]->dev);
		rtnl_unlock();
	}

	fwdnic.debugfs = debugfs_create_dir("fwdnic", NULL);
	debugfs_create_file("run", 0600, fwdnic.debugfs, NULL, &fwdnic_run_fops);
	return 0;

err_unregister:
	while (i--)
		unregister_netdev(fwdnic.port[i]->dev);
err_destroy:
	fwdnic_destroy();
	return err;
}

static void __exit fwdnic_exit(void)
{
	int i;

	/* Stops the traffic, so that a run in progress ends within a second. */
	for (i = 0; i < FWDNIC_PORTS; i++)
		unregister_netdev(fwdnic.port[i]->dev);
	debugfs_remove(fwdnic.debugfs);
	fwdnic_destroy();
}

module_init(fwdnic_init);
module_exit(fwdnic_exit);
MODULE_DESCRIPTION("Software NIC pair for IPv4 forwarding benchmarks of the TX-completion free path");
MODULE_LICENSE("GPL");
