// ccbench speed benchmark: the ns-3 side.
//
// Dumbbell, identical to ccbench's dumbbell builder:
//
//   a_k --left_k--> r1 ==central==> r2 --right_k--> b_k      (k = 1..flows)
//
// Every link is a PointToPoint link (rate, one-way delay) with a DropTail device queue of the
// given size in packets at EACH end (one per direction). The traffic-control layer's default
// root queue disc (installed by Ipv4AddressHelper::Assign) is removed with
// TrafficControlHelper::Uninstall, so the device DropTail queue is the only queue a packet
// waits in. (With no qdisc, the traffic-control layer drops a packet when the device queue is
// stopped, i.e. full: the same tail drop, reported through TrafficControlLayer's "TcDrop" trace.)
//
// TCP: ns-3 TcpCubic (HyStart on, ns-3 defaults for its parameters), MSS 1448, timestamps,
// SACK, delayed ACK every 2nd segment / 40 ms, IW10, min RTO 200 ms, 32 MiB buffers, no pacing.
// One BulkSendApplication -> PacketSink per flow, all started at t = 0.
//
// Output: one JSON object on stdout (see PrintJson). Build: benches/ns3/build.sh.

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#ifndef NS3_VERSION_STR
#define NS3_VERSION_STR "unknown"
#endif
#ifndef NS3_BUILD_STR
#define NS3_BUILD_STR "unknown"
#endif

#include <chrono>
#include <cstdio>
#include <iomanip>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

using namespace ns3;

namespace
{

// Counters fed by trace sinks (plain globals: the sinks must stay cheap).
uint64_t g_centralFwdTx = 0;  // packets put on the wire r1 -> r2 (data direction)
uint64_t g_centralRevTx = 0;  // packets put on the wire r2 -> r1 (ACK direction)
uint64_t g_centralFwdBytes = 0;
uint64_t g_tcDrops = 0;       // traffic-control drops (device queue full), all nodes
uint64_t g_tcDropsR1 = 0;     // ... at r1 (almost all of them the central link, data direction)
uint64_t g_queueDrops = 0;    // drops inside device queues (should stay 0: flow control stops first)

void
CentralFwdTx(Ptr<const Packet> p)
{
    ++g_centralFwdTx;
    g_centralFwdBytes += p->GetSize() - 2; // IP bytes: drop the 2-byte PPP header
}

void
CentralRevTx(Ptr<const Packet>)
{
    ++g_centralRevTx;
}

void
TcDrop(Ptr<const Packet>)
{
    ++g_tcDrops;
}

void
TcDropR1(Ptr<const Packet>)
{
    ++g_tcDrops;
    ++g_tcDropsR1;
}

void
QueueDrop(Ptr<const Packet>)
{
    ++g_queueDrops;
}

std::string
QueueSize(uint32_t packets)
{
    return std::to_string(packets) + "p";
}

// Connects a PointToPoint link between two nodes and returns its two devices.
NetDeviceContainer
Link(Ptr<Node> x, Ptr<Node> y, const std::string& rate, const std::string& delay, uint32_t queue)
{
    PointToPointHelper p2p;
    p2p.SetDeviceAttribute("DataRate", StringValue(rate));
    p2p.SetChannelAttribute("Delay", StringValue(delay));
    p2p.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", QueueSizeValue(QueueSize(queue)));
    return p2p.Install(x, y);
}

} // namespace

int
main(int argc, char* argv[])
{
    auto wallStart = std::chrono::steady_clock::now();

    uint32_t flows = 1;
    std::string centralRate = "100Mbps";
    std::string centralDelay = "10ms";
    std::string sideRate = "1Gbps";
    std::string sideDelay = "1ms";
    uint32_t centralQueue = 1000;
    uint32_t sideQueue = 1000;
    double duration = 10.0;
    uint32_t seed = 1;
    uint32_t mss = 1448;
    uint32_t bufBytes = 32 * 1024 * 1024;
    uint32_t sendSize = 14480;
    bool hystart = true;
    std::string tcp = "ns3::TcpCubic";
    std::string recovery = "ns3::TcpPrrRecovery";

    CommandLine cmd(__FILE__);
    cmd.AddValue("flows", "number of flows (sender/receiver host pairs)", flows);
    cmd.AddValue("centralRate", "central link rate (ns-3 DataRate, e.g. 100Mbps)", centralRate);
    cmd.AddValue("centralDelay", "central link one-way delay (e.g. 10ms)", centralDelay);
    cmd.AddValue("sideRate", "rate of every side link", sideRate);
    cmd.AddValue("sideDelay", "one-way delay of every side link", sideDelay);
    cmd.AddValue("centralQueue", "droptail queue of the central link, packets, each end", centralQueue);
    cmd.AddValue("sideQueue", "droptail queue of every side link, packets, each end", sideQueue);
    cmd.AddValue("duration", "simulated seconds", duration);
    cmd.AddValue("seed", "ns-3 run number (RngSeedManager::SetRun)", seed);
    cmd.AddValue("mss", "TCP segment size (payload bytes)", mss);
    cmd.AddValue("buf", "TCP send and receive buffer bytes", bufBytes);
    cmd.AddValue("sendSize", "BulkSendApplication write size", sendSize);
    cmd.AddValue("hystart", "TcpCubic HyStart", hystart);
    cmd.AddValue("tcp", "congestion control TypeId", tcp);
    cmd.AddValue("recovery", "TCP recovery TypeId", recovery);
    cmd.Parse(argc, argv);

    RngSeedManager::SetSeed(1);
    RngSeedManager::SetRun(seed);

    // --- TCP defaults (apply to every socket, senders and sinks) ---
    Config::SetDefault("ns3::TcpL4Protocol::SocketType", StringValue(tcp));
    Config::SetDefault("ns3::TcpL4Protocol::RecoveryType", StringValue(recovery));
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(mss));
    Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(10));
    Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(2));
    Config::SetDefault("ns3::TcpSocket::DelAckTimeout", TimeValue(MilliSeconds(40)));
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(bufBytes));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(bufBytes));
    Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(MilliSeconds(200)));
    Config::SetDefault("ns3::TcpSocketBase::Timestamp", BooleanValue(true));
    Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(true));
    Config::SetDefault("ns3::TcpSocketBase::WindowScaling", BooleanValue(true));
    Config::SetDefault("ns3::TcpSocketState::EnablePacing", BooleanValue(false));
    Config::SetDefault("ns3::TcpCubic::HyStart", BooleanValue(hystart));

    // --- nodes ---
    Ptr<Node> r1 = CreateObject<Node>();
    Ptr<Node> r2 = CreateObject<Node>();
    NodeContainer senders;
    NodeContainer receivers;
    senders.Create(flows);
    receivers.Create(flows);

    InternetStackHelper stack;
    stack.Install(r1);
    stack.Install(r2);
    stack.Install(senders);
    stack.Install(receivers);

    // --- links ---
    Ipv4AddressHelper addr("10.0.0.0", "255.255.255.252");
    TrafficControlHelper tch;
    auto assign = [&](NetDeviceContainer d) {
        Ipv4InterfaceContainer ifs = addr.Assign(d);
        addr.NewNetwork();
        tch.Uninstall(d); // no qdisc: the device DropTail queue is the only queue
        return ifs;
    };

    NetDeviceContainer central = Link(r1, r2, centralRate, centralDelay, centralQueue);
    assign(central);
    std::vector<Ipv4Address> receiverAddr;
    for (uint32_t k = 0; k < flows; ++k)
    {
        assign(Link(senders.Get(k), r1, sideRate, sideDelay, sideQueue));
        Ipv4InterfaceContainer ifs = assign(Link(r2, receivers.Get(k), sideRate, sideDelay, sideQueue));
        receiverAddr.push_back(ifs.GetAddress(1));
    }
    Ipv4GlobalRoutingHelper::PopulateRoutingTables();

    // --- traces: bottleneck packet counts and drops ---
    // (TraceConnectWithoutContext returns false, silently, for an unknown trace source name.)
    bool tracesOk =
        central.Get(0)->TraceConnectWithoutContext("PhyTxBegin", MakeCallback(&CentralFwdTx)) &&
        central.Get(1)->TraceConnectWithoutContext("PhyTxBegin", MakeCallback(&CentralRevTx));
    NS_ABORT_MSG_UNLESS(tracesOk, "no PhyTxBegin trace source");
    for (uint32_t i = 0; i < NodeList::GetNNodes(); ++i)
    {
        Ptr<Node> n = NodeList::GetNode(i);
        bool ok = n->GetObject<TrafficControlLayer>()->TraceConnectWithoutContext(
            "TcDrop",
            MakeCallback(n == r1 ? &TcDropR1 : &TcDrop));
        NS_ABORT_MSG_UNLESS(ok, "no TcDrop trace source in TrafficControlLayer");
        for (uint32_t d = 0; d < n->GetNDevices(); ++d)
        {
            Ptr<PointToPointNetDevice> dev = DynamicCast<PointToPointNetDevice>(n->GetDevice(d));
            if (dev)
            {
                ok = dev->GetQueue()->TraceConnectWithoutContext("Drop", MakeCallback(&QueueDrop));
                NS_ABORT_MSG_UNLESS(ok, "no Drop trace source in the device queue");
            }
        }
    }

    // --- applications ---
    const uint16_t port = 5001;
    std::vector<Ptr<PacketSink>> sinks;
    for (uint32_t k = 0; k < flows; ++k)
    {
        PacketSinkHelper sink("ns3::TcpSocketFactory", InetSocketAddress(Ipv4Address::GetAny(), port));
        ApplicationContainer sa = sink.Install(receivers.Get(k));
        sa.Start(Seconds(0));
        sinks.push_back(DynamicCast<PacketSink>(sa.Get(0)));

        BulkSendHelper bulk("ns3::TcpSocketFactory", InetSocketAddress(receiverAddr[k], port));
        bulk.SetAttribute("MaxBytes", UintegerValue(0));
        bulk.SetAttribute("SendSize", UintegerValue(sendSize));
        ApplicationContainer ba = bulk.Install(senders.Get(k));
        ba.Start(Seconds(0));
    }

    Simulator::Stop(Seconds(duration));
    auto runStart = std::chrono::steady_clock::now();
    Simulator::Run();
    auto runEnd = std::chrono::steady_clock::now();

    uint64_t events = Simulator::GetEventCount();
    std::vector<uint64_t> rx;
    for (auto& s : sinks)
    {
        rx.push_back(s->GetTotalRx());
    }
    Simulator::Destroy();
    auto wallEnd = std::chrono::steady_clock::now();

    double runS = std::chrono::duration<double>(runEnd - runStart).count();
    double wallS = std::chrono::duration<double>(wallEnd - wallStart).count();

    std::ostringstream o;
    o << std::setprecision(10);
    o << "{\"simulator\": \"ns-3\", \"ns3_version\": \"" << NS3_VERSION_STR
      << "\", \"ns3_build\": \"" << NS3_BUILD_STR << "\", \"tcp\": \"" << tcp << "\""
      << ", \"flows\": " << flows << ", \"duration_s\": " << duration << ", \"seed\": " << seed
      << ", \"central_rate\": \"" << centralRate << "\", \"central_delay\": \"" << centralDelay
      << "\", \"side_rate\": \"" << sideRate << "\", \"side_delay\": \"" << sideDelay
      << "\", \"central_queue_pkts\": " << centralQueue << ", \"side_queue_pkts\": " << sideQueue
      << ", \"mss\": " << mss << ", \"hystart\": " << (hystart ? "true" : "false")
      << ", \"wall_time_s\": " << wallS << ", \"run_time_s\": " << runS
      << ", \"events\": " << events
      << ", \"bottleneck_packets\": " << g_centralFwdTx
      << ", \"bottleneck_packets_rev\": " << g_centralRevTx
      << ", \"bottleneck_bytes\": " << g_centralFwdBytes
      << ", \"drops\": " << (g_tcDrops + g_queueDrops)
      << ", \"drops_r1\": " << g_tcDropsR1
      << ", \"delivered_bytes\": [";
    for (size_t k = 0; k < rx.size(); ++k)
    {
        o << (k ? ", " : "") << rx[k];
    }
    o << "], \"throughput_mbps\": [";
    for (size_t k = 0; k < rx.size(); ++k)
    {
        o << (k ? ", " : "") << rx[k] * 8.0 / duration / 1e6;
    }
    o << "]}";
    std::cout << o.str() << std::endl;
    return 0;
}
