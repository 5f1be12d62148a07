-- Wireshark/tshark dissector for onic's TLP captures (docs/pcap.md):
-- pcap link type 147 (USER0), each record a 4-byte pseudo-header and one
-- PCIe TLP (PCIe Base Specification 5.0, non-flit mode).
--
-- Use:  wireshark -X lua_script:tlp/wireshark/onic.lua capture.pcap
--       tshark -X lua_script:tlp/wireshark/onic.lua -r capture.pcap -V
-- or copy this file into Wireshark's personal Lua plugins folder.
--
-- onic's tests run tshark with this dissector over every hand-checked TLP
-- vector and compare each field with onic's own decoder.

local onic = Proto("onic", "onic capture pseudo-header")
local tlp = Proto("onic_tlp", "PCIe Transaction Layer Packet")

local dirs = { [0] = "downstream", [1] = "upstream" }
local statuses = { [0] = "SC", [1] = "UR", [2] = "CRS", [4] = "CA" }

local pf = {
  version   = ProtoField.uint8("onic.version", "Version"),
  direction = ProtoField.uint8("onic.direction", "Direction", base.DEC, dirs, 0x01),
  tap       = ProtoField.uint16("onic.tap", "Tap"),
}
onic.fields = { pf.version, pf.direction, pf.tap }

local tf = {
  prefixes  = ProtoField.uint8("onic_tlp.prefixes", "Prefix DWs"),
  fmt       = ProtoField.uint8("onic_tlp.fmt", "Fmt", base.BIN),
  type      = ProtoField.uint8("onic_tlp.type", "Type", base.BIN),
  kind      = ProtoField.string("onic_tlp.kind", "Kind"),
  tc        = ProtoField.uint8("onic_tlp.tc", "Traffic class"),
  tag       = ProtoField.uint16("onic_tlp.tag", "Tag", base.HEX),
  attr      = ProtoField.uint8("onic_tlp.attr", "Attr (IDO RO NS)", base.BIN),
  th        = ProtoField.bool("onic_tlp.th", "TH"),
  td        = ProtoField.bool("onic_tlp.td", "TD"),
  ep        = ProtoField.bool("onic_tlp.ep", "EP"),
  at        = ProtoField.uint8("onic_tlp.at", "AT"),
  length    = ProtoField.uint16("onic_tlp.length", "Length (DW)"),
  requester = ProtoField.string("onic_tlp.requester", "Requester ID"),
  completer = ProtoField.string("onic_tlp.completer", "Completer ID"),
  first_be  = ProtoField.uint8("onic_tlp.first_be", "First DW BE", base.HEX),
  last_be   = ProtoField.uint8("onic_tlp.last_be", "Last DW BE", base.HEX),
  address   = ProtoField.uint64("onic_tlp.address", "Address", base.HEX),
  register  = ProtoField.uint16("onic_tlp.register", "Register", base.HEX),
  status    = ProtoField.uint8("onic_tlp.status", "Completion status", base.DEC, statuses),
  bcm       = ProtoField.bool("onic_tlp.bcm", "BCM"),
  bytecount = ProtoField.uint16("onic_tlp.byte_count", "Byte count"),
  loweraddr = ProtoField.uint8("onic_tlp.lower_address", "Lower address", base.HEX),
  msgcode   = ProtoField.uint8("onic_tlp.message_code", "Message code", base.HEX),
  routing   = ProtoField.uint8("onic_tlp.routing", "Message routing", base.BIN),
  data      = ProtoField.bytes("onic_tlp.data", "Data"),
  ecrc      = ProtoField.uint32("onic_tlp.ecrc", "ECRC", base.HEX),
  snapped   = ProtoField.uint16("onic_tlp.snapped", "Bytes not captured (payload and digest; the capture kept the header)"),
}
-- outerReported is the TLP's length as the pcap record gives it (set by
-- the onic dissector around its call of the TLP dissector).
local outerReported = nil

local list = {}
for _, f in pairs(tf) do list[#list + 1] = f end
tlp.fields = list

-- kind returns the spec mnemonic and header class for Fmt/Type, or nil for
-- a reserved combination.
local function kind(fmt, typ)
  if typ == 0 then
    if fmt <= 1 then return "MRd", "mem" end
    if fmt == 2 or fmt == 3 then return "MWr", "mem" end
  elseif typ == 1 and fmt <= 1 then return "MRdLk", "mem"
  elseif typ == 2 and fmt == 0 then return "IORd", "mem"
  elseif typ == 2 and fmt == 2 then return "IOWr", "mem"
  elseif typ == 4 and fmt == 0 then return "CfgRd0", "cfg"
  elseif typ == 4 and fmt == 2 then return "CfgWr0", "cfg"
  elseif typ == 5 and fmt == 0 then return "CfgRd1", "cfg"
  elseif typ == 5 and fmt == 2 then return "CfgWr1", "cfg"
  elseif typ >= 16 and typ <= 23 and fmt == 1 then return "Msg", "msg"
  elseif typ >= 16 and typ <= 23 and fmt == 3 then return "MsgD", "msg"
  elseif typ == 10 and fmt == 0 then return "Cpl", "cpl"
  elseif typ == 10 and fmt == 2 then return "CplD", "cpl"
  elseif typ == 11 and fmt == 0 then return "CplLk", "cpl"
  elseif typ == 11 and fmt == 2 then return "CplDLk", "cpl"
  elseif (fmt == 2 or fmt == 3) and typ == 12 then return "FetchAdd", "mem"
  elseif (fmt == 2 or fmt == 3) and typ == 13 then return "Swap", "mem"
  elseif (fmt == 2 or fmt == 3) and typ == 14 then return "CAS", "mem"
  end
  return nil
end

local function id(v)
  return string.format("%02x:%02x.%d", bit.rshift(v, 8), bit.band(bit.rshift(v, 3), 31), bit.band(v, 7))
end

function tlp.dissector(buf, pinfo, tree)
  local off = 0
  while off < buf:len() and bit.rshift(buf(off, 1):uint(), 5) == 4 do off = off + 4 end
  local t = tree:add(tlp, buf())
  if off + 4 > buf:len() then t:add_expert_info(PI_MALFORMED, PI_ERROR, "truncated header"); return end
  t:add(tf.prefixes, off / 4)
  local b0, b1, b2 = buf(off, 1):uint(), buf(off + 1, 1):uint(), buf(off + 2, 1):uint()
  local fmt, typ = bit.rshift(b0, 5), bit.band(b0, 31)
  local k, class = kind(fmt, typ)
  t:add(tf.fmt, fmt)
  t:add(tf.type, typ)
  if not k then t:add_expert_info(PI_MALFORMED, PI_ERROR, "reserved Fmt/Type"); return end
  local hl = 12 + 4 * bit.band(fmt, 1)
  if off + hl > buf:len() then t:add_expert_info(PI_MALFORMED, PI_ERROR, "truncated header"); return end
  t:add(tf.kind, k)
  pinfo.cols.protocol = "PCIe"
  local tagHi = bit.bor(bit.lshift(bit.band(bit.rshift(b1, 7), 1), 9), bit.lshift(bit.band(bit.rshift(b1, 3), 1), 8))
  t:add(tf.tc, bit.band(bit.rshift(b1, 4), 7))
  t:add(tf.attr, bit.bor(bit.band(b1, 4), bit.band(bit.rshift(b2, 4), 3)))
  t:add(tf.th, bit.band(b1, 1) ~= 0)
  local td = bit.band(b2, 0x80) ~= 0
  t:add(tf.td, td)
  t:add(tf.ep, bit.band(b2, 0x40) ~= 0)
  t:add(tf.at, bit.band(bit.rshift(b2, 2), 3))
  local lenField = bit.bor(bit.lshift(bit.band(b2, 3), 8), buf(off + 3, 1):uint())
  local len = lenField
  if len == 0 then len = 1024 end
  if k ~= "Msg" and k ~= "Cpl" and k ~= "CplLk" then t:add(tf.length, len) end
  local h = off
  -- The Info column: kind, size, where, requester's tag; Source and
  -- Destination: who sent the TLP and where it goes (a completion's
  -- completer and requester, a request's requester and its address or
  -- target function).
  local info = k
  if class == "cpl" then
    local completer, requester = id(buf(h + 4, 2):uint()), id(buf(h + 8, 2):uint())
    t:add(tf.completer, completer)
    local b6 = buf(h + 6, 1):uint()
    local status = bit.rshift(b6, 5)
    t:add(tf.status, status)
    t:add(tf.bcm, bit.band(b6, 0x10) ~= 0)
    local bc = bit.bor(bit.lshift(bit.band(b6, 15), 8), buf(h + 7, 1):uint())
    if bc == 0 then bc = 4096 end
    t:add(tf.bytecount, bc)
    t:add(tf.requester, requester)
    local tag = bit.bor(tagHi, buf(h + 10, 1):uint())
    t:add(tf.tag, tag)
    t:add(tf.loweraddr, bit.band(buf(h + 11, 1):uint(), 0x7f))
    local st = ({[0] = "SC", [1] = "UR", [2] = "CRS", [4] = "CA"})[status] or string.format("status %d", status)
    info = string.format("%s %s", k, st)
    if bit.band(fmt, 2) ~= 0 then info = info .. string.format(" %d B", len * 4) end
    info = info .. string.format(" tag %d, %d B left", tag, bc)
    pinfo.cols.src, pinfo.cols.dst = completer, requester
  else
    local requester = id(buf(h + 4, 2):uint())
    t:add(tf.requester, requester)
    local tag = bit.bor(tagHi, buf(h + 6, 1):uint())
    t:add(tf.tag, tag)
    pinfo.cols.src = requester
    local b7 = buf(h + 7, 1):uint()
    if class == "msg" then
      t:add(tf.msgcode, b7)
      t:add(tf.routing, bit.band(typ, 7))
      if bit.band(typ, 7) == 1 then t:add(tf.address, buf(h + 8, 8):uint64()) end
      info = string.format("%s code 0x%02x", k, b7)
    else
      t:add(tf.first_be, bit.band(b7, 15))
      t:add(tf.last_be, bit.rshift(b7, 4))
      info = string.format("%s %d B", k, len * 4)
      if class == "cfg" then
        local target = id(buf(h + 8, 2):uint())
        local reg = bit.bor(bit.lshift(bit.band(buf(h + 10, 1):uint(), 15), 8), bit.band(buf(h + 11, 1):uint(), 0xfc))
        t:add(tf.completer, target)
        t:add(tf.register, reg)
        info = info .. string.format(" reg 0x%03x", reg)
        pinfo.cols.dst = target
      else
        local addr
        if hl == 16 then
          addr = buf(h + 8, 8):uint64():band(UInt64(0xfffffffc, 0xffffffff))
        else
          -- bit.band is signed 32-bit; clear the PH bits with arithmetic.
          local lo = buf(h + 8, 4):uint()
          addr = UInt64(lo - lo % 4)
        end
        t:add(tf.address, addr)
        local hex = "0x" .. addr:tohex():gsub("^0+(%x)", "%1")
        info = info .. " " .. hex
        pinfo.cols.dst = hex
      end
      if k ~= "MWr" then info = info .. string.format(" tag %d", tag) end
    end
  end
  local dlen = 0
  if bit.band(fmt, 2) ~= 0 then dlen = len * 4 end
  local whole = off + hl + dlen
  if td then whole = whole + 4 end
  local reported = buf:reported_len()
  if outerReported then reported = outerReported; outerReported = nil end
  if buf:len() == off + hl and reported == whole and whole > off + hl then
    -- Snapped to the header (docs/pcap.md): the record's length is the
    -- whole TLP's, its captured bytes the header's.
    t:add(tf.snapped, whole - off - hl)
    pinfo.cols.info = info .. " [payload not captured]"
    return
  end
  if off + hl + dlen > buf:len() then t:add_expert_info(PI_MALFORMED, PI_ERROR, "truncated payload"); return end
  if dlen > 0 then t:add(tf.data, buf(off + hl, dlen)) end
  if td and off + hl + dlen + 4 <= buf:len() then t:add(tf.ecrc, buf(off + hl + dlen, 4)) end
  pinfo.cols.info = info
end

function onic.dissector(buf, pinfo, tree)
  if buf:len() < 4 then return 0 end
  local t = tree:add(onic, buf(0, 4))
  t:add(pf.version, buf(0, 1))
  t:add(pf.direction, buf(1, 1))
  t:add(pf.tap, buf(2, 2))
  -- A sub-tvb's reported length is its captured one: pass the record's.
  outerReported = buf:reported_len() - 4
  tlp.dissector:call(buf(4):tvb(), pinfo, tree)
  outerReported = nil
  return buf:len()
end

DissectorTable.get("wtap_encap"):add(wtap.USER0, onic)
