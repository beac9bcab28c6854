"""Sample KB, role ``patient_diabetes``: plain-language answers for people with diabetes (written for this project)."""

from __future__ import annotations

ENTRIES: list[tuple[str, str, str, str]] = [
    # --- Chẩn đoán
    ("Chẩn đoán", "Đường huyết lúc đói bao nhiêu là bình thường?",
     "Đường huyết lúc đói (nhịn ăn ít nhất 8 giờ) bình thường dưới 5,6 mmol/L (100 mg/dL). "
     "Từ 5,6 đến 6,9 mmol/L là rối loạn đường huyết lúc đói (tiền đái tháo đường); từ 7,0 mmol/L (126 mg/dL) trở lên cần bác sĩ đánh giá đái tháo đường. "
     "Một lần đo cao chưa đủ để kết luận; bác sĩ thường cho xét nghiệm lại hoặc làm thêm HbA1c.",
     "đường huyết bình thường; đường máu lúc đói; chỉ số đường huyết; đường huyết bao nhiêu là cao"),
    ("Chẩn đoán", "HbA1c là gì, bao nhiêu là bị tiểu đường?",
     "HbA1c phản ánh mức đường huyết trung bình trong khoảng 2–3 tháng gần đây, không cần nhịn đói khi lấy máu. "
     "HbA1c từ 6,5% trở lên (làm tại phòng xét nghiệm chuẩn) là một tiêu chuẩn chẩn đoán đái tháo đường; từ 5,7% đến 6,4% là tiền đái tháo đường. "
     "Với người đã bị bệnh, nhiều người được đặt mục tiêu HbA1c dưới 7%, nhưng mục tiêu của bạn do bác sĩ quyết định.",
     "HbA1c; xét nghiệm đường trung bình; chỉ số A1c; tiêu chuẩn chẩn đoán tiểu đường"),
    ("Chẩn đoán", "Tiền đái tháo đường là gì, có chữa được không?",
     "Tiền đái tháo đường là khi đường huyết cao hơn bình thường nhưng chưa đến mức đái tháo đường. "
     "Đây là giai đoạn có thể đảo ngược: giảm khoảng 5–7% cân nặng nếu thừa cân, vận động ít nhất 150 phút mỗi tuần và ăn uống lành mạnh giúp giảm rõ nguy cơ tiến triển thành đái tháo đường. "
     "Bạn nên kiểm tra đường huyết định kỳ mỗi năm theo hẹn của bác sĩ.",
     "tiền tiểu đường; tiền đái tháo đường; đường huyết hơi cao; rối loạn dung nạp đường"),
    ("Chẩn đoán", "Dấu hiệu nào cho thấy mình có thể bị tiểu đường?",
     "Các dấu hiệu thường gặp là khát nhiều, đi tiểu nhiều, hay đói, sụt cân không rõ lý do, mệt mỏi, nhìn mờ, vết thương lâu lành. "
     "Tuy nhiên nhiều người bị đái tháo đường típ 2 không có triệu chứng gì. "
     "Nếu bạn thừa cân, trên 35 tuổi, có người thân bị đái tháo đường hoặc từng bị tiểu đường thai kỳ, hãy đi xét nghiệm đường huyết.",
     "triệu chứng tiểu đường; dấu hiệu đái tháo đường; khát nước tiểu nhiều; sụt cân"),
    ("Chẩn đoán", "Tiểu đường típ 1 và típ 2 khác nhau thế nào?",
     "Ở típ 1, cơ thể gần như không còn tạo ra insulin, thường gặp ở người trẻ và bắt buộc phải tiêm insulin suốt đời. "
     "Ở típ 2, cơ thể vẫn tạo insulin nhưng dùng kém hiệu quả, thường liên quan đến thừa cân, ít vận động và di truyền; "
     "điều trị gồm thay đổi lối sống, thuốc uống hoặc thuốc tiêm, đôi khi cần insulin.",
     "típ 1; típ 2; type 1; type 2; tiểu đường loại 1 loại 2"),
    ("Chẩn đoán", "Tiểu đường thai kỳ là gì?",
     "Tiểu đường thai kỳ là tình trạng đường huyết tăng được phát hiện lần đầu khi mang thai, thường được tầm soát ở tuần 24–28. "
     "Kiểm soát tốt bằng ăn uống, vận động và khi cần là insulin giúp mẹ và bé an toàn. "
     "Sau sinh, mẹ nên xét nghiệm lại đường huyết và kiểm tra định kỳ vì có nguy cơ mắc đái tháo đường típ 2 về sau.",
     "tiểu đường thai kỳ; đái tháo đường thai kỳ; mang thai đường huyết cao; bà bầu tiểu đường"),
    # --- Chế độ ăn
    ("Chế độ ăn", "Người bị tiểu đường nên ăn gì?",
     "Nên ăn nhiều rau xanh, chọn tinh bột hấp thu chậm như gạo lứt, yến mạch, khoai, đậu; ăn đủ đạm từ cá, thịt nạc, trứng, đậu phụ. "
     "Mẹo đơn giản là chia đĩa: một nửa rau, một phần tư đạm, một phần tư tinh bột. "
     "Ăn đúng bữa, không bỏ bữa và hạn chế đồ ngọt, nước ngọt, đồ chiên rán. Chuyên gia dinh dưỡng có thể giúp bạn lập thực đơn riêng.",
     "tiểu đường nên ăn gì; chế độ ăn tiểu đường; thực đơn cho người tiểu đường; ăn uống đái tháo đường"),
    ("Chế độ ăn", "Bị tiểu đường có được ăn cơm không?",
     "Có, bạn vẫn ăn cơm được nhưng nên kiểm soát lượng, ví dụ khoảng một đến một chén rưỡi mỗi bữa tùy thể trạng và mức vận động. "
     "Ăn rau trước, cơm sau và có thể thay một phần cơm trắng bằng gạo lứt hoặc ngũ cốc nguyên hạt. "
     "Đo đường huyết sau ăn giúp bạn biết lượng cơm nào phù hợp với mình.",
     "ăn cơm; tiểu đường ăn cơm được không; cơm trắng; gạo lứt"),
    ("Chế độ ăn", "Người tiểu đường có được ăn trái cây không?",
     "Được, trái cây cung cấp chất xơ và vitamin. Nên ăn trái cây nguyên quả thay vì nước ép, mỗi lần một phần vừa phải (ví dụ một quả cam, một quả táo nhỏ) và chia ra trong ngày. "
     "Hạn chế các loại rất ngọt như sầu riêng, mít, nhãn, vải, trái cây sấy hoặc ngâm đường.",
     "trái cây; hoa quả; tiểu đường ăn trái cây; nước ép"),
    ("Chế độ ăn", "Người bị tiểu đường có uống được sữa không?",
     "Có thể uống sữa không đường hoặc ít đường, sữa tách béo hoặc sữa dành cho người đái tháo đường, với lượng vừa phải. "
     "Sữa đặc có đường, trà sữa và sữa có đường làm đường huyết tăng nhanh nên hạn chế. "
     "Hãy đọc nhãn để biết lượng đường trong sản phẩm.",
     "uống sữa; sữa cho người tiểu đường; sữa không đường"),
    ("Chế độ ăn", "Người tiểu đường có được uống rượu bia không?",
     "Tốt nhất là hạn chế tối đa. Rượu bia có thể gây hạ đường huyết muộn, nhất là khi uống lúc đói hoặc đang dùng insulin, thuốc nhóm sulfonylurea. "
     "Nếu uống, chỉ uống ít, uống trong bữa ăn và không uống khi đường huyết chưa ổn định. "
     "Rượu bia cũng làm tăng cân và mỡ máu.",
     "rượu bia; uống rượu tiểu đường; bia"),
    ("Chế độ ăn", "Đường ăn kiêng (chất tạo ngọt) có an toàn không?",
     "Các chất tạo ngọt không năng lượng được phép lưu hành (như stevia, sucralose) nhìn chung an toàn khi dùng ở mức vừa phải và có thể thay đường trong đồ uống. "
     "Tuy vậy, bánh kẹo “không đường” vẫn có thể chứa nhiều tinh bột và chất béo. "
     "Mục tiêu lâu dài vẫn là giảm dần khẩu vị ngọt.",
     "đường ăn kiêng; chất tạo ngọt; đường cỏ ngọt; stevia; bánh kẹo không đường"),
    ("Chế độ ăn", "Có nên nhịn ăn sáng để giảm đường huyết?",
     "Không nên bỏ bữa, đặc biệt nếu bạn dùng insulin hoặc thuốc có thể gây hạ đường huyết. "
     "Bỏ bữa dễ làm đường huyết dao động, hạ đường huyết rồi ăn bù nhiều ở bữa sau. "
     "Hãy ăn đều các bữa với lượng vừa phải; nếu muốn nhịn ăn gián đoạn, cần hỏi bác sĩ để chỉnh thuốc.",
     "bỏ bữa sáng; nhịn ăn; nhịn đói giảm đường"),
    # --- Vận động
    ("Vận động", "Người tiểu đường nên tập thể dục thế nào?",
     "Nên vận động ít nhất 150 phút mỗi tuần với cường độ vừa như đi bộ nhanh, đạp xe, bơi, chia ra ít nhất 3 ngày và không nghỉ quá 2 ngày liền. "
     "Thêm tập sức cơ 2–3 buổi mỗi tuần. "
     "Đứng dậy đi lại vài phút sau mỗi 30 phút ngồi. Bắt đầu nhẹ nhàng và tăng dần, nhất là khi đã lâu không tập.",
     "tập thể dục; vận động; đi bộ; tiểu đường tập thể thao; tập luyện"),
    ("Vận động", "Tập thể dục có làm hạ đường huyết không?",
     "Có thể, nhất là khi dùng insulin hoặc thuốc sulfonylurea. "
     "Hãy đo đường huyết trước khi tập nếu được, mang theo kẹo hoặc nước đường, không tập lúc đói kéo dài. "
     "Nếu thấy run, vã mồ hôi, hoa mắt khi tập, dừng lại và ăn ngay 15–20 g đường.",
     "hạ đường khi tập; tập thể dục bị hạ đường"),
    ("Vận động", "Khi nào người tiểu đường không nên tập thể dục?",
     "Nên tạm hoãn tập khi đường huyết đang rất cao kèm mệt, khát nhiều, buồn nôn, hoặc khi đang bị hạ đường huyết. "
     "Người có biến chứng mắt nặng, bệnh tim, loét bàn chân cần hỏi bác sĩ về loại bài tập phù hợp. "
     "Ngừng tập ngay nếu đau ngực, khó thở hoặc chóng mặt nhiều. "
     "Nếu đau ngực không hết sau vài phút nghỉ, hoặc kèm vã mồ hôi, khó thở, hãy gọi 115 ngay; không tự lái xe đến bệnh viện.",
     "không nên tập; đường huyết cao có tập được không; chống chỉ định tập"),
    # --- Thuốc & insulin
    ("Thuốc & insulin", "Uống thuốc tiểu đường lâu dài có hại gan thận không?",
     "Các thuốc điều trị đái tháo đường được dùng phổ biến là an toàn khi dùng đúng chỉ định và được theo dõi. "
     "Đường huyết cao kéo dài mới là nguyên nhân chính gây hại thận, mắt, tim mạch. "
     "Bác sĩ sẽ xét nghiệm chức năng thận, gan định kỳ để chọn và chỉnh liều thuốc; bạn đừng tự ý ngưng thuốc.",
     "thuốc tiểu đường hại thận; uống thuốc lâu dài; tác dụng phụ thuốc tiểu đường"),
    ("Thuốc & insulin", "Quên uống thuốc tiểu đường thì phải làm sao?",
     "Nếu nhớ ra sớm, gần giờ uống, bạn có thể uống liều đó. Nếu đã gần đến liều kế tiếp thì bỏ qua, không uống gấp đôi. "
     "Riêng thuốc nhóm sulfonylurea (gliclazide, glimepiride, glibenclamide…) chỉ uống bù khi bạn sắp ăn hoặc đang ăn; "
     "nếu đã bỏ bữa thì bỏ qua liều đó, vì uống khi bụng đói dễ gây hạ đường huyết. "
     "Với insulin, cách xử trí khác nhau tùy loại, hãy hỏi bác sĩ hoặc dược sĩ để có hướng dẫn riêng.",
     "quên uống thuốc; quên thuốc tiểu đường; uống bù thuốc"),
    ("Thuốc & insulin", "Metformin có tác dụng phụ gì?",
     "Metformin thường gây khó chịu đường tiêu hóa như đầy bụng, tiêu chảy, buồn nôn lúc mới dùng; uống trong hoặc ngay sau bữa ăn và tăng liều từ từ giúp giảm các triệu chứng này. "
     "Dùng lâu có thể thiếu vitamin B12 nên bác sĩ có thể kiểm tra định kỳ. "
     "Thuốc ít gây hạ đường huyết khi dùng một mình. Báo bác sĩ nếu bạn có bệnh thận hoặc sắp chụp chiếu có tiêm thuốc cản quang.",
     "metformin; glucophage; tác dụng phụ metformin; tiêu chảy do thuốc"),
    ("Thuốc & insulin", "Tiêm insulin có bị nghiện hay phụ thuộc không?",
     "Insulin là hormone tự nhiên của cơ thể, không gây nghiện. "
     "Phải tiêm insulin nghĩa là cơ thể đang cần thêm insulin để kiểm soát đường huyết, không phải do bệnh “nặng lên vì tiêm”. "
     "Một số người đái tháo đường típ 2 chỉ cần insulin trong một giai đoạn, tùy quyết định của bác sĩ.",
     "tiêm insulin có nghiện không; sợ tiêm insulin; insulin phụ thuộc"),
    ("Thuốc & insulin", "Tiêm insulin ở đâu và tiêm thế nào cho đúng?",
     "Insulin thường được tiêm dưới da ở bụng (cách rốn khoảng 5 cm), mặt trước ngoài đùi, mông hoặc mặt sau cánh tay. "
     "Nên xoay vòng vị trí tiêm, mỗi lần cách chỗ cũ khoảng 1–2 cm để tránh u mỡ dưới da. "
     "Dùng kim mới mỗi lần nếu có thể và làm theo đúng hướng dẫn của nhân viên y tế về liều và giờ tiêm.",
     "vị trí tiêm insulin; cách tiêm insulin; bút tiêm; kim tiêm insulin"),
    ("Thuốc & insulin", "Bảo quản insulin như thế nào?",
     "Insulin chưa mở nắp bảo quản trong ngăn mát tủ lạnh (2–8°C), không để ngăn đá. "
     "Bút hoặc lọ đang dùng có thể để ở nhiệt độ phòng dưới 30°C, tránh nắng và nóng, dùng trong khoảng thời gian ghi trên tờ hướng dẫn (thường khoảng 4 tuần). "
     "Không dùng insulin đã đông đá, đổi màu hoặc vón cục.",
     "bảo quản insulin; insulin để tủ lạnh; insulin đi du lịch"),
    ("Thuốc & insulin", "Có nên dùng thuốc nam, thực phẩm chức năng để chữa tiểu đường?",
     "Hiện chưa có thuốc nam hay thực phẩm chức năng nào được chứng minh thay thế được thuốc điều trị đái tháo đường. "
     "Một số sản phẩm quảng cáo “chữa khỏi tiểu đường” có thể trộn thuốc tây không rõ liều, gây hạ đường huyết hoặc hại gan thận. "
     "Không tự ý ngừng thuốc; nếu muốn dùng thêm sản phẩm nào, hãy hỏi bác sĩ trước.",
     "thuốc nam; thực phẩm chức năng; chữa tiểu đường dứt điểm; thuốc bắc"),
    # --- Hạ đường huyết
    ("Hạ đường huyết", "Dấu hiệu hạ đường huyết là gì?",
     "Hạ đường huyết là khi đường huyết dưới 3,9 mmol/L (70 mg/dL). "
     "Dấu hiệu thường gặp: run tay, vã mồ hôi, tim đập nhanh, đói cồn cào, chóng mặt, lo lắng; nặng hơn có thể lú lẫn, nói líu lưỡi, khó nói, co giật, hôn mê. "
     "Người dùng insulin hoặc sulfonylurea có nguy cơ cao hơn.",
     "hạ đường huyết; tụt đường; hạ đường; run tay vã mồ hôi; đường huyết thấp"),
    ("Hạ đường huyết", "Bị hạ đường huyết phải xử trí thế nào?",
     "Nếu còn tỉnh, ăn hoặc uống ngay 15–20 g đường hấp thu nhanh: khoảng 150 mL nước ngọt có đường hoặc nước trái cây "
     "(không dùng loại “ăn kiêng”, “không đường”), 3–4 viên kẹo đường hoặc một thìa canh đường pha nước. "
     "Có dấu hiệu hạ đường huyết mà không có máy đo thì vẫn xử trí ngay như trên, đừng chờ đo. "
     "Sau 15 phút đo lại; nếu vẫn dưới 3,9 mmol/L hoặc còn dấu hiệu thì lặp lại. Khi đã ổn, ăn thêm bữa nhỏ có tinh bột nếu chưa đến bữa chính. "
     "Nếu người bệnh lơ mơ, không nuốt được hoặc co giật, không được cho ăn uống qua miệng: đặt nằm nghiêng và gọi cấp cứu 115 ngay. "
     "Sau một cơn hạ đường huyết nặng, hoặc khi bị hạ đường huyết lúc đang dùng thuốc nhóm sulfonylurea (gliclazide, glimepiride…), "
     "cần đi khám ngay trong ngày, vì cơn hạ đường có thể tái lại trong nhiều giờ.",
     "xử trí hạ đường huyết; tụt đường phải làm sao; quy tắc 15; cấp cứu hạ đường"),
    ("Hạ đường huyết", "Vì sao hay bị hạ đường huyết về đêm?",
     "Hạ đường huyết ban đêm có thể do liều insulin hoặc thuốc buổi tối cao, bữa tối ít, uống rượu hoặc vận động nhiều trong ngày. "
     "Dấu hiệu gợi ý là ác mộng, đổ mồ hôi đêm, sáng dậy đau đầu mệt mỏi. "
     "Hãy đo đường huyết trước khi ngủ và vài lần lúc nửa đêm, rồi báo bác sĩ để chỉnh thuốc.",
     "hạ đường huyết ban đêm; tụt đường đêm; đổ mồ hôi đêm"),
    # --- Theo dõi đường huyết
    ("Theo dõi đường huyết", "Nên đo đường huyết tại nhà khi nào và bao nhiêu lần?",
     "Số lần đo tùy cách điều trị: người tiêm insulin nhiều mũi thường cần đo nhiều lần mỗi ngày (trước bữa ăn, trước khi ngủ), "
     "người chỉ dùng thuốc uống có thể đo ít hơn theo hướng dẫn của bác sĩ. "
     "Nên đo thêm khi thấy mệt, nghi hạ đường huyết, khi ốm hoặc thay đổi thuốc. Ghi kết quả để mang theo khi tái khám.",
     "đo đường huyết tại nhà; máy đo đường huyết; đo mấy lần; khi nào đo đường"),
    ("Theo dõi đường huyết", "Đường huyết sau ăn bao nhiêu là tốt?",
     "Với nhiều người đái tháo đường, mục tiêu thường là đường huyết trước ăn 4,4–7,2 mmol/L (80–130 mg/dL) và dưới 10 mmol/L (180 mg/dL) sau ăn 1–2 giờ. "
     "Người cao tuổi hoặc có nhiều bệnh kèm theo có thể có mục tiêu nới lỏng hơn. "
     "Khi mang thai, mục tiêu chặt hơn: lúc đói dưới 5,3 mmol/L, 1 giờ sau ăn dưới 7,8 mmol/L, 2 giờ sau ăn dưới 6,7 mmol/L. "
     "Bác sĩ sẽ đặt mục tiêu phù hợp riêng cho bạn.",
     "đường huyết sau ăn; mục tiêu đường huyết; sau ăn 2 giờ"),
    ("Theo dõi đường huyết", "Máy đo đường huyết cá nhân có chính xác không?",
     "Máy đo cá nhân đạt chuẩn có sai số chấp nhận được để theo dõi hằng ngày, nhưng có thể lệch so với xét nghiệm máu tĩnh mạch. "
     "Để đo chính xác: rửa và lau khô tay, dùng que thử còn hạn, bảo quản đúng cách, mã que phù hợp máy. "
     "Nếu kết quả bất thường không giống cảm giác của bạn, hãy đo lại hoặc so với xét nghiệm tại phòng khám.",
     "máy đo đường huyết; que thử; đo đường huyết sai; kết quả đo không chính xác"),
    ("Theo dõi đường huyết", "Bao lâu nên xét nghiệm HbA1c một lần?",
     "Thường xét nghiệm HbA1c khoảng 3 tháng một lần khi mới điều trị hoặc chưa đạt mục tiêu, "
     "và khoảng 6 tháng một lần khi đường huyết đã ổn định. Bác sĩ có thể chỉ định khác tùy tình trạng của bạn.",
     "xét nghiệm HbA1c bao lâu; kiểm tra A1c"),
    # --- Biến chứng
    ("Biến chứng", "Tiểu đường gây ra những biến chứng gì?",
     "Đường huyết cao kéo dài có thể gây hại mắt (bệnh võng mạc), thận, thần kinh (tê bì tay chân), bàn chân, tim mạch và đột quỵ. "
     "Kiểm soát tốt đường huyết, huyết áp, mỡ máu và không hút thuốc giúp giảm nhiều nguy cơ này. "
     "Khám định kỳ mắt, thận, bàn chân mỗi năm giúp phát hiện sớm.",
     "biến chứng tiểu đường; biến chứng đái tháo đường; tiểu đường nguy hiểm không"),
    ("Biến chứng", "Người tiểu đường có cần khám mắt không?",
     "Có. Bệnh võng mạc do đái tháo đường ở giai đoạn đầu thường không gây nhìn mờ nhưng có thể dẫn đến mất thị lực nếu không phát hiện. "
     "Người đái tháo đường típ 2 nên khám đáy mắt ngay khi được chẩn đoán, sau đó thường mỗi năm một lần hoặc theo hẹn của bác sĩ mắt. "
     "Nếu đột ngột nhìn mờ, thấy nhiều đốm đen bay, chớp sáng hoặc như có màn che một phần tầm nhìn, "
     "đó là cấp cứu mắt: hãy đến khám mắt ngay trong ngày.",
     "khám mắt; võng mạc tiểu đường; mắt mờ; biến chứng mắt"),
    ("Biến chứng", "Làm sao biết tiểu đường đã ảnh hưởng đến thận?",
     "Biến chứng thận giai đoạn sớm thường không có triệu chứng, chỉ phát hiện qua xét nghiệm nước tiểu (albumin niệu) và máu (chức năng thận). "
     "Vì vậy cần làm các xét nghiệm này ít nhất mỗi năm một lần. "
     "Kiểm soát đường huyết, huyết áp và dùng đúng thuốc bác sĩ kê giúp làm chậm tổn thương thận.",
     "biến chứng thận; suy thận tiểu đường; đạm niệu; albumin niệu"),
    ("Biến chứng", "Tê bì, châm chích bàn chân có phải do tiểu đường không?",
     "Tê bì, châm chích, nóng rát hoặc mất cảm giác ở bàn chân là dấu hiệu thường gặp của tổn thương thần kinh do đái tháo đường. "
     "Mất cảm giác làm bạn không nhận ra vết thương, dễ bị loét. "
     "Hãy báo bác sĩ để được khám cảm giác bàn chân và kiểm soát đường huyết tốt hơn.",
     "tê bì chân; châm chích; kiến bò chân; biến chứng thần kinh; mất cảm giác bàn chân"),
    ("Biến chứng", "Đường huyết rất cao, mệt lả, buồn nôn có nguy hiểm không?",
     "Có thể rất nguy hiểm. Đường huyết rất cao kèm khát nhiều, tiểu nhiều, buồn nôn, nôn, đau bụng, thở nhanh, hơi thở có mùi trái cây hoặc lơ mơ có thể là nhiễm toan ceton hoặc tăng áp lực thẩm thấu. "
     "Người đang dùng thuốc nhóm SGLT2 (empagliflozin, dapagliflozin, canagliflozin…) có thể bị nhiễm toan ceton "
     "ngay cả khi đường huyết chỉ hơi cao hoặc gần bình thường, nên có các dấu hiệu trên là phải đi cấp cứu. "
     "Cần đến bệnh viện ngay hoặc gọi cấp cứu 115, không tự lái xe. "
     "Không tự ngừng insulin, kể cả khi không ăn được, và không tự tăng liều thuốc tại nhà.",
     "đường huyết rất cao; nhiễm toan ceton; hôn mê tiểu đường; đường huyết trên 20"),
    # --- Bàn chân
    ("Bàn chân", "Người tiểu đường chăm sóc bàn chân thế nào?",
     "Mỗi ngày kiểm tra bàn chân, kẽ ngón (dùng gương hoặc nhờ người nhà) để phát hiện vết xước, phồng rộp, chai, đổi màu. "
     "Rửa chân bằng nước ấm; thử nhiệt độ nước bằng khuỷu tay hoặc nhiệt kế, không thử bằng bàn chân vì bàn chân có thể đã giảm cảm giác. "
     "Không ngâm chân nước nóng, không chườm nóng hay dùng túi sưởi, không hơ chân gần lửa hoặc lò sưởi. "
     "Lau khô kỹ kẽ ngón, thoa kem dưỡng nhưng không thoa vào kẽ. "
     "Mang giày dép vừa vặn, không đi chân đất; cắt móng thẳng ngang, không tự cắt khóe móng hay gọt chai chân.",
     "chăm sóc bàn chân; bàn chân tiểu đường; cắt móng chân; giày dép tiểu đường"),
    ("Bàn chân", "Vết thương ở chân lâu lành thì phải làm sao?",
     "Ở người đái tháo đường, vết thương bàn chân dễ nhiễm trùng và lâu lành. "
     "Rửa nhẹ bằng nước muối sinh lý, che bằng gạc sạch và hạn chế đi lại đè lên vết thương. "
     "Mọi vết thương, vết phồng rộp hay vết loét ở bàn chân, dù nhỏ, cần được nhân viên y tế xem trong vòng 1–2 ngày; đừng chờ xem có tự lành không. "
     "Đi khám ngay trong ngày nếu sưng đỏ lan rộng, chảy mủ, có mùi hôi, đổi màu đen hoặc kèm sốt. "
     "Không tự đắp lá cây hay thuốc không rõ nguồn gốc.",
     "vết thương lâu lành; loét bàn chân; nhiễm trùng chân; vết loét tiểu đường"),
    # --- Ngày ốm & cuộc sống
    ("Ngày ốm & cuộc sống", "Bị ốm, sốt, không ăn được thì dùng thuốc tiểu đường thế nào?",
     "Khi ốm, đường huyết có thể tăng dù ăn ít. Đo đường huyết thường xuyên hơn, uống đủ nước và ăn nhẹ từng ít một. "
     "Không tự ý bỏ insulin nền; một số thuốc uống có thể cần tạm ngưng khi nôn, tiêu chảy hoặc mất nước, hãy hỏi bác sĩ. "
     "Đi khám ngay nếu nôn liên tục, không ăn uống được hoặc đường huyết cao kéo dài. "
     "Nếu người bệnh lơ mơ, khó đánh thức, thở nhanh hoặc đau bụng nhiều, hãy gọi 115 ngay; không tự lái xe đến bệnh viện.",
     "ngày ốm; bị sốt tiểu đường; ốm không ăn được; nôn ói"),
    ("Ngày ốm & cuộc sống", "Người tiểu đường có cần tiêm vắc xin không?",
     "Người đái tháo đường dễ bị biến chứng khi mắc cúm, viêm phổi, nên được khuyên tiêm vắc xin cúm hằng năm và vắc xin phế cầu, viêm gan B theo tư vấn của bác sĩ. "
     "Hãy hỏi bác sĩ về lịch tiêm phù hợp với tuổi và tình trạng sức khỏe của bạn.",
     "vắc xin; tiêm phòng cúm; phế cầu; tiêm chủng người tiểu đường"),
    ("Ngày ốm & cuộc sống", "Người tiểu đường đi du lịch cần chuẩn bị gì?",
     "Mang đủ thuốc và insulin cho cả chuyến đi (nên dư thêm), để insulin trong hành lý xách tay, tránh nóng. "
     "Mang máy đo, que thử, kẹo đường phòng hạ đường huyết và giấy tờ ghi bệnh, thuốc đang dùng. "
     "Nếu đi qua nhiều múi giờ, hỏi bác sĩ cách chỉnh giờ tiêm.",
     "du lịch; đi máy bay mang insulin; đi xa"),
    ("Ngày ốm & cuộc sống", "Tiểu đường có chữa khỏi hoàn toàn được không?",
     "Hiện nay đái tháo đường là bệnh mạn tính, chưa có cách chữa khỏi hoàn toàn. "
     "Tuy nhiên, một số người típ 2 giảm cân đáng kể có thể đưa đường huyết về gần bình thường mà không cần thuốc trong một thời gian (lui bệnh), vẫn cần theo dõi lâu dài. "
     "Cẩn thận với các quảng cáo “chữa khỏi tiểu đường”.",
     "chữa khỏi tiểu đường; tiểu đường có khỏi không; lui bệnh"),
    ("Ngày ốm & cuộc sống", "Hút thuốc lá ảnh hưởng thế nào đến người tiểu đường?",
     "Hút thuốc làm tăng mạnh nguy cơ bệnh tim, đột quỵ, bệnh thận, loét và cắt cụt chân ở người đái tháo đường, và làm đường huyết khó kiểm soát hơn. "
     "Bỏ thuốc lá là một trong những việc có lợi nhất bạn có thể làm; bác sĩ có thể hỗ trợ bạn cai thuốc.",
     "hút thuốc; thuốc lá; cai thuốc lá"),
]
URGENT_CODES: frozenset[str] = frozenset({"TD-025", "TD-035", "TD-038"})
